#if canImport(Glibc)
import Glibc
#endif
import ReachabilityBus
import ReachabilityClient
import ReachabilityCore
import ReachabilityProperties
import SystemSupport

/// The JSON form of a snapshot, shared by every `--json`.
struct StatusRecord {
    var time: String?
    var host: String?
    /// `wait --json`: whether the condition held.
    var satisfied: Bool?
    /// For a host name: where its resolution stood (`"resolved"`, `"failed"`, `"no-answer"`, `"not-asked"`).
    var resolution: HostResolution?
    /// `wait --json`: how long the wait took, in seconds.
    var waited: Double?
    let snapshot: ReachabilitySnapshot
    let daemonAvailable: Bool

    init(_ snapshot: ReachabilitySnapshot, daemonAvailable: Bool) {
        self.snapshot = snapshot
        self.daemonAvailable = daemonAvailable
    }

    /// One compact JSON object, members sorted by name: each property with a JSON key in the
    /// property table, the status's description, `daemonAvailable`, and the optional members
    /// that are set.
    var json: String {
        var members = snapshot.jsonMembers
        members["description"] = .string(snapshot.status.localizedDescription(language: "en"))
        members["daemonAvailable"] = .boolean(daemonAvailable)
        if let time { members["time"] = .string(time) }
        if let host { members["host"] = .string(host) }
        if let satisfied { members["satisfied"] = .boolean(satisfied) }
        if let resolution { members["resolution"] = .string(Self.text(resolution)) }
        if let waited { members["waited"] = .number((waited * 1000).rounded() / 1000) }
        if let path = snapshot.destinationPath {
            members["via"] = .string(path.rawValue)
            members["address"] = .string(snapshot.destinationAddress)
        }
        return JSONValue.object(members).text
    }

    /// The `"resolution"` member's value.
    static func text(_ resolution: HostResolution) -> String {
        switch resolution {
        case .notAsked: "not-asked"
        case .waiting: "no-answer"
        case .resolved: "resolved"
        case .failed: "failed"
        }
    }
}

/// Writing to stdout, one flushed line at a time (monitor output is read through pipes).
enum Output {
    /// Writes `text` and a newline to stdout at once.
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes all of `text` to `descriptor` (a closed pipe ends the writing: EPIPE, SIGPIPE
    /// being the default action, ends the process as for any command-line tool).
    /// The corresponding C function is `write`.
    static func write(_ text: String, to descriptor: Int32) {
        try? writeAll(Array(text.utf8), to: descriptor, action: "write to descriptor \(descriptor)")
    }

    /// Now in UTC, ISO 8601 to the second: "2026-11-24T17:20:01Z".
    /// The corresponding C functions are `time`, `gmtime_r` and `strftime`.
    static func now() -> String {
        var seconds = time(nil)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &fields)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// One family's row: "reachable via eth0 (ethernet)", "reachable" (no link known), "not reachable".
    private static func familyText(_ isReachable: Bool, _ interface: String, _ transport: Transport?) -> String {
        guard isReachable else { return "not reachable" }
        guard !interface.isEmpty else { return "reachable" }
        return "reachable via \(interface)" + (transport.map { " (\($0.rawValue))" } ?? "")
    }

    /// The human form of `status`, in the style of `networkctl status`.
    static func text(_ snapshot: ReachabilitySnapshot) -> String {
        // The summary: rows that combine properties; then a row per property with a text label.
        let rows: [(String, String)] = [
            ("Status", "\(snapshot.status.rawValue) (\(snapshot.status.localizedDescription))"),
            ("Interface", text(.string(snapshot.interface))),
            ("Transport", snapshot.transport?.rawValue ?? "-"),
            ("IPv4", familyText(snapshot.isIPv4Reachable, snapshot.ipv4Interface, snapshot.ipv4Transport)),
            ("IPv6", familyText(snapshot.isIPv6Reachable, snapshot.ipv6Interface, snapshot.ipv6Transport)),
            ("Metered", text(.boolean(snapshot.isMetered)) + (snapshot.meteredReason == .noRoute ? "" : " (\(snapshot.meteredReason.rawValue))")),
            ("Online", "\(snapshot.connectivity.rawValue) (\(snapshot.connectivity.localizedDescription))"
                + (snapshot.captivePortal.isEmpty ? "" : ", portal: \(snapshot.captivePortal)")),
            ("Reason", snapshot.reason),
        ]
        let propertyRows = ReachabilityProperty.allCases.compactMap { property in
            property.definition.textLabel.map { label in
                // The session's keys in RFC 8908's order, as words rather than JSON.
                (label, property == .captivePortalSession ? text(.string(snapshot.captivePortalSession.summary)) : text(snapshot.value(of: property, generation: 0)))
            }
        }
        let summary = (rows + propertyRows).map { "\(String(repeating: " ", count: max(0, 9 - $0.0.count)))\($0.0): \($0.1)" }.joined(separator: "\n")
        return snapshot.interfaces.isEmpty ? summary : summary + "\n\n" + text(snapshot.interfaces)
    }

    /// The interfaces as `networkctl list` lays out links: a header, then one row per link in
    /// index order, each column as wide as its widest cell ("-" for no gateway or no reason).
    static func text(_ interfaces: [NetworkInterface]) -> String {
        let header = ["IDX", "LINK", "TYPE", "OPERATIONAL", "IPV4", "IPV6", "METERED", "MTU", "GATEWAYS", "IGNORED"]
        let rows = interfaces.map { link in
            [
                String(link.index.rawValue), link.name, link.transport.rawValue, link.operational.rawValue,
                text(.boolean(link.hasIPv4)), text(.boolean(link.hasIPv6)), text(.boolean(link.isMetered)), link.mtu == 0 ? "-" : String(link.mtu),
                text(.strings(link.gateways.map(\.description))), text(.string(link.ignoreReason)),
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { cells in
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                // The index is right-aligned, the last column not padded.
                return column == 0 ? padding + cell : (column == cells.count - 1 ? cell : cell + padding)
            }.joined(separator: " ")
        }.joined(separator: "\n")
    }

    /// A property's value in a row of its own: text ("-" when empty), yes or no, a number, a
    /// list separated by ", " ("-" when empty), or JSON for dictionaries.
    private static func text(_ value: BusValue) -> String {
        switch value {
        case .string(let string): string.isEmpty ? "-" : string
        case .boolean(let flag): flag ? "yes" : "no"
        case .unsigned32(let number): String(number)
        case .unsignedInteger(let number): String(number)
        case .strings(let strings): strings.isEmpty ? "-" : strings.joined(separator: ", ")
        case .dictionary, .dictionaries: value.json.text
        }
    }
}
