#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient
import ReachabilityCore
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

    /// One compact JSON object, members sorted by name; absent optional members are left out.
    var json: String {
        var members: [String: JSONValue] = [
            "status": .string(snapshot.status.rawValue),
            "description": .string(snapshot.status.localizedDescription(language: "en")),
            "reachable": .boolean(snapshot.isReachable),
            "ipv4Reachable": .boolean(snapshot.isIPv4Reachable),
            "ipv6Reachable": .boolean(snapshot.isIPv6Reachable),
            "interface": .string(snapshot.interface),
            "transport": .string(snapshot.transport?.rawValue ?? ""),
            "metered": .boolean(snapshot.isMetered),
            "reason": .string(snapshot.reason),
            "connectivity": .string(snapshot.connectivity.rawValue),
            "ipv4Connectivity": .string(snapshot.ipv4Connectivity.rawValue),
            "ipv6Connectivity": .string(snapshot.ipv6Connectivity.rawValue),
            "captivePortal": .string(snapshot.captivePortal),
            "ipv4Interface": .string(snapshot.ipv4Interface),
            "ipv6Interface": .string(snapshot.ipv6Interface),
            "ipv4Transport": .string(snapshot.ipv4Transport?.rawValue ?? ""),
            "ipv6Transport": .string(snapshot.ipv6Transport?.rawValue ?? ""),
            "daemonAvailable": .boolean(daemonAvailable),
        ]
        if let time { members["time"] = .string(time) }
        if let host { members["host"] = .string(host) }
        if let satisfied { members["satisfied"] = .boolean(satisfied) }
        if let resolution { members["resolution"] = .string(Self.text(resolution)) }
        if let waited { members["waited"] = .number((waited * 1000).rounded() / 1000) }
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
        func yesNo(_ flag: Bool) -> String { flag ? "yes" : "no" }
        let rows: [(String, String)] = [
            ("Status", "\(snapshot.status.rawValue) (\(snapshot.status.localizedDescription))"),
            ("Interface", snapshot.interface.isEmpty ? "-" : snapshot.interface),
            ("Transport", snapshot.transport?.rawValue ?? "-"),
            ("IPv4", familyText(snapshot.isIPv4Reachable, snapshot.ipv4Interface, snapshot.ipv4Transport)),
            ("IPv6", familyText(snapshot.isIPv6Reachable, snapshot.ipv6Interface, snapshot.ipv6Transport)),
            ("Metered", yesNo(snapshot.isMetered)),
            ("Online", "\(snapshot.connectivity.rawValue) (\(snapshot.connectivity.localizedDescription))"
                + (snapshot.captivePortal.isEmpty ? "" : ", portal: \(snapshot.captivePortal)")),
            ("Reason", snapshot.reason),
        ]
        return rows.map { "\(String(repeating: " ", count: 9 - $0.0.count))\($0.0): \($0.1)" }.joined(separator: "\n")
    }
}
