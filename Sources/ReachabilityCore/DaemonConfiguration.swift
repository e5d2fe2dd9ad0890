/// A glob and the value it assigns, e.g. `wlan*` → `.wifi`.
public struct InterfaceRule<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The interface-name glob.
    public var pattern: String
    /// The value for matching interfaces.
    public var value: Value

    /// Creates a rule.
    public init(pattern: String, value: Value) {
        self.pattern = pattern
        self.value = value
    }
}

/// The daemon's configuration: `/etc/reachabilityd/reachabilityd.conf` and its drop-ins.
public struct DaemonConfiguration: Sendable, Hashable {
    /// `IgnoreInterfaces=`: globs of interfaces that never make the host reachable.
    public var ignoreInterfaces: [String] = []
    /// `ContainerInterfaces=`: globs of interfaces taken as containers' and virtual machines'
    /// when their ports give no evidence either way (a bridge's ports decide first).
    public var containerInterfaces: [String] = ContainerInterfaces.defaultPatterns
    /// `Transport=GLOB:TRANSPORT`: overrides of the classification; the last match wins.
    public var transportOverrides: [InterfaceRule<Transport>] = []
    /// `Metered=GLOB:BOOL` per interface; the last match wins, before transport rules.
    public var meteredInterfaces: [InterfaceRule<Bool>] = []
    /// `Metered=TRANSPORT:BOOL` per transport; the last match wins. Default: only wwan.
    public var meteredTransports: [Transport: Bool] = [:]
    /// `DownDelaySec=`: hold a transition to not-reachable this long; 0 publishes at once.
    public var downDelaySeconds: Double = 0
    /// `[Connectivity]`: the active check, off by default.
    public var connectivity = ConnectivityCheckSettings()
    /// `[Metrics] TextfileDirectory=`: where the daemon keeps `reachabilityd.prom` for
    /// node_exporter's textfile collector; "" (the default): nowhere.
    public var metricsTextfileDirectory = ""

    /// No settings: built-in behaviour.
    public static let `default` = DaemonConfiguration()

    /// Creates a configuration.
    public init(ignoreInterfaces: [String] = [], containerInterfaces: [String] = ContainerInterfaces.defaultPatterns,
                transportOverrides: [InterfaceRule<Transport>] = [],
                meteredInterfaces: [InterfaceRule<Bool>] = [], meteredTransports: [Transport: Bool] = [:],
                downDelaySeconds: Double = 0) {
        self.ignoreInterfaces = ignoreInterfaces
        self.containerInterfaces = containerInterfaces
        self.transportOverrides = transportOverrides
        self.meteredInterfaces = meteredInterfaces
        self.meteredTransports = meteredTransports
        self.downDelaySeconds = downDelaySeconds
    }

    /// The last `Transport=` rule matching `name`.
    public func transportOverride(forInterface name: String) -> InterfaceRule<Transport>? {
        transportOverrides.last { Glob.matches($0.pattern, name) }
    }

    /// The first `ContainerInterfaces=` glob matching `name`.
    public func containerPattern(forInterface name: String) -> String? {
        containerInterfaces.first { Glob.matches($0, name) }
    }

    /// What a `Metered=` line says of interface `name` with `transport`: an interface rule,
    /// else a transport rule; nil when none matches (``MeteredRule`` then asks the others).
    public func meteredSetting(interface name: String, transport: Transport) -> Bool? {
        if let rule = meteredInterfaces.last(where: { Glob.matches($0.pattern, name) }) { return rule.value }
        return meteredTransports[transport]
    }

    /// The settings in configuration-file syntax, for `Explain()`.
    public var summary: String {
        var lines: [String] = []
        if !ignoreInterfaces.isEmpty { lines.append("IgnoreInterfaces=\(ignoreInterfaces.joined(separator: " "))") }
        lines.append("ContainerInterfaces=\(containerInterfaces.joined(separator: " "))")
        if !transportOverrides.isEmpty {
            lines.append("Transport=" + transportOverrides.map { "\($0.pattern):\($0.value.rawValue)" }.joined(separator: " "))
        }
        let metered = meteredInterfaces.map { "\($0.pattern):\($0.value ? "yes" : "no")" }
            + meteredTransports.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value ? "yes" : "no")" }
        if !metered.isEmpty { lines.append("Metered=\(metered.joined(separator: " "))") }
        lines.append("DownDelaySec=" + Self.seconds(downDelaySeconds))
        if connectivity.isEnabled {
            lines += [
                "[Connectivity]", "CheckURL=\(connectivity.checkURL)", "CheckResponse=\(connectivity.checkResponse)",
                "CheckIntervalSec=\(Self.seconds(connectivity.intervalSeconds))", "CheckTimeoutSec=\(Self.seconds(connectivity.timeoutSeconds))",
                "CaptivePortalAPI=\(connectivity.queriesCaptivePortalAPI ? "yes" : "no")",
            ]
            if !connectivity.captivePortalAPICAFile.isEmpty { lines.append("CaptivePortalAPICAFile=\(connectivity.captivePortalAPICAFile)") }
        } else {
            lines.append("[Connectivity] CheckURL= (no active check: the daemon sends nothing, but for RFC 7050's lookup of ipv4only.arpa through the system resolver on an IPv6-only host)")
        }
        lines.append("[Metrics] TextfileDirectory=\(metricsTextfileDirectory)" + (metricsTextfileDirectory.isEmpty ? " (no metrics file)" : ""))
        return lines.joined(separator: "\n")
    }

    /// "2", or "500ms" for a fraction of a second.
    private static func seconds(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : "\(Int((value * 1000).rounded()))ms"
    }
}

/// One problem in a configuration file, located by file and line.
package struct ConfigurationDiagnostic: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file's path.
    package var file: String
    /// The 1-based line number.
    package var line: Int
    /// What is wrong.
    package var message: String

    /// "FILE:LINE: MESSAGE".
    package var description: String { "\(file):\(line): \(message)" }
}

/// Every problem found in a set of configuration files.
package struct InvalidConfiguration: Error, Sendable, Hashable {
    /// The problems, in file and line order.
    package var diagnostics: [ConfigurationDiagnostic]
}

/// Parses systemd-style INI configuration: sections `[Reachability]`, `[Connectivity]` and `[Metrics]`,
/// `Key=value` lines, `#` and `;` comments. List settings accumulate across lines and files; an
/// empty assignment resets them. Files are applied in order: later files win.
package enum ConfigurationParser {
    /// The main section.
    package static let section = "Reachability"
    /// The active connectivity check's section.
    package static let connectivitySection = "Connectivity"
    /// The metrics file's section.
    package static let metricsSection = "Metrics"

    /// Parses `files` (path and text, in application order).
    ///
    /// - Returns: the configuration.
    /// - Throws: ``InvalidConfiguration`` with every problem found; then nothing is applied and
    ///   the caller keeps its last good configuration.
    package static func parse(_ files: [(path: String, text: String)]) throws(InvalidConfiguration) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        var diagnostics: [ConfigurationDiagnostic] = []
        for (path, text) in files {
            var currentSection: String?
            // "\r\n" is one Character in Swift: split on it too, or a file with CRLF line endings
            // (as editors on other systems write them) would be one long line.
            for (offset, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
                let line = rawLine.trimmingWhitespace()
                func fail(_ message: String) {
                    diagnostics.append(ConfigurationDiagnostic(file: path, line: offset + 1, message: message))
                }
                if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
                if line.hasPrefix("[") {
                    guard line.hasSuffix("]") else { fail("malformed section header \"\(line)\""); continue }
                    let name = String(line.dropFirst().dropLast())
                    if ![section, connectivitySection, metricsSection].contains(name) {
                        fail("unknown section [\(name)], expected [\(section)], [\(connectivitySection)] or [\(metricsSection)]")
                    }
                    currentSection = name
                    continue
                }
                guard let equals = line.firstIndex(of: "=") else { fail("expected Key=value, got \"\(line)\""); continue }
                let key = String(line[..<equals]).trimmingWhitespace()
                let value = String(line[line.index(after: equals)...]).trimmingWhitespace()
                switch currentSection {
                case section?: if let problem = apply(key: key, value: value, to: &configuration) { fail(problem) }
                case connectivitySection?: if let problem = apply(key: key, value: value, to: &configuration.connectivity) { fail(problem) }
                case metricsSection?: if let problem = applyMetrics(key: key, value: value, to: &configuration) { fail(problem) }
                default: fail("assignment outside section [\(section)]")
                }
            }
        }
        guard diagnostics.isEmpty else { throw InvalidConfiguration(diagnostics: diagnostics) }
        return configuration
    }

    /// Applies one assignment; returns a problem description or nil.
    private static func apply(key: String, value: String, to configuration: inout DaemonConfiguration) -> String? {
        let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        switch key {
        case "IgnoreInterfaces":
            if words.isEmpty { configuration.ignoreInterfaces = [] } else { configuration.ignoreInterfaces += words }
        case "ContainerInterfaces":
            if words.isEmpty { configuration.containerInterfaces = [] } else { configuration.containerInterfaces += words }
        case "Transport":
            if words.isEmpty { configuration.transportOverrides = []; return nil }
            for word in words {
                guard let (pattern, name) = split(word), let transport = Transport(rawValue: name) else {
                    return "Transport= expects GLOB:TRANSPORT with TRANSPORT one of wifi, wwan, ethernet, vpn, other; got \"\(word)\""
                }
                configuration.transportOverrides.append(InterfaceRule(pattern: pattern, value: transport))
            }
        case "Metered":
            if words.isEmpty {
                configuration.meteredInterfaces = []
                configuration.meteredTransports = [:]
                return nil
            }
            for word in words {
                guard let (target, flag) = split(word), let metered = boolean(flag) else {
                    return "Metered= expects TRANSPORT:yes|no or GLOB:yes|no; got \"\(word)\""
                }
                if let transport = Transport(rawValue: target) {
                    configuration.meteredTransports[transport] = metered
                } else {
                    configuration.meteredInterfaces.append(InterfaceRule(pattern: target, value: metered))
                }
            }
        case "DownDelaySec":
            guard let seconds = duration(value, limit: 3600) else {
                return "DownDelaySec= expects a non-negative number of seconds (e.g. 2, 0.5, 500ms); got \"\(value)\""
            }
            configuration.downDelaySeconds = seconds
        default:
            return "unknown setting \"\(key)\""
        }
        return nil
    }

    /// Applies one `[Connectivity]` assignment; returns a problem description or nil.
    private static func apply(key: String, value: String, to settings: inout ConnectivityCheckSettings) -> String? {
        switch key {
        case "CheckURL":
            let lowered = value.lowercased()
            guard value.isEmpty || (lowered.hasPrefix("http://") || lowered.hasPrefix("https://")) && value.count > 8
                && !value.contains(where: { $0 == " " || $0 == "\t" }) && value.utf8.count <= 2048
            else { return "CheckURL= expects an http:// or https:// URL (or nothing, for no check); got \"\(value)\"" }
            settings.checkURL = value
        case "CheckResponse":
            guard value.utf8.count <= 1024 else { return "CheckResponse= is longer than 1024 bytes" }
            settings.checkResponse = value
        case "CheckIntervalSec":
            guard let seconds = duration(value, limit: 86400), seconds >= 1 else {
                return "CheckIntervalSec= expects seconds from 1 to 86400 (e.g. 300, 30s); got \"\(value)\""
            }
            settings.intervalSeconds = seconds
        case "CheckTimeoutSec":
            guard let seconds = duration(value, limit: 300), seconds >= 0.1 else {
                return "CheckTimeoutSec= expects seconds from 0.1 to 300 (e.g. 10, 500ms); got \"\(value)\""
            }
            settings.timeoutSeconds = seconds
        case "CaptivePortalAPI":
            guard let flag = boolean(value) else { return "CaptivePortalAPI= expects yes or no; got \"\(value)\"" }
            settings.queriesCaptivePortalAPI = flag
        case "CaptivePortalAPICAFile":
            guard value.isEmpty || value.hasPrefix("/") else { return "CaptivePortalAPICAFile= expects an absolute path; got \"\(value)\"" }
            settings.captivePortalAPICAFile = value
        default:
            return "unknown setting \"\(key)\" in [\(connectivitySection)]"
        }
        return nil
    }

    /// Applies one `[Metrics]` assignment; returns a problem description or nil.
    private static func applyMetrics(key: String, value: String, to configuration: inout DaemonConfiguration) -> String? {
        guard key == "TextfileDirectory" else { return "unknown setting \"\(key)\" in [\(metricsSection)]" }
        guard value.isEmpty || value.hasPrefix("/") && !value.contains("\n") else {
            return "TextfileDirectory= expects an absolute path (or nothing, for no metrics file); got \"\(value)\""
        }
        configuration.metricsTextfileDirectory = value
        return nil
    }

    private static func split(_ word: String) -> (String, String)? {
        guard let colon = word.lastIndex(of: ":") else { return nil }
        let left = String(word[..<colon])
        let right = String(word[word.index(after: colon)...])
        return left.isEmpty || right.isEmpty ? nil : (left, right)
    }

    private static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "1", "on": true
        case "no", "false", "0", "off": false
        default: nil
        }
    }

    /// Seconds ("2", "0.5", "2s", "500ms"), non-negative and at most `limit`.
    private static func duration(_ text: String, limit: Double) -> Double? {
        let (number, scale) = text.hasSuffix("ms") ? (String(text.dropLast(2)), 0.001)
            : text.hasSuffix("s") ? (String(text.dropLast()), 1.0) : (text, 1.0)
        guard let value = Double(number), value >= 0, value.isFinite, value * scale <= limit else { return nil }
        return value * scale
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and carriage returns.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
