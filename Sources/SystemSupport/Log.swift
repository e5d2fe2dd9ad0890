#if canImport(Glibc)
import Glibc
#endif

/// Syslog priorities, as journald reads them from a `<N>` line prefix on stderr.
package enum LogLevel: Int32, Sendable, Comparable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// Parses "error", "warning", "notice", "info" or "debug".
    package init?(name: String) {
        switch name.lowercased() {
        case "err", "error": self = .error
        case "warn", "warning": self = .warning
        case "notice": self = .notice
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }

    /// Orders by verbosity: `.error` < `.debug`.
    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Whether stderr is the journal: systemd sets `$JOURNAL_STREAM` to the device and inode of the
/// stream it connected, so a `<N>` line prefix there sets the entry's priority.
/// The corresponding C functions are `getenv` and `fstat`.
package func stderrIsTheJournal() -> Bool {
    guard let stream = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
    var status = stat()
    guard (try? valueOrErrno("fstat stderr", { fstat(STDERR_FILENO, &status) })) != nil else { return false }
    return stream == "\(status.st_dev):\(status.st_ino)"
}

/// A minimal logger writing `<priority>message` lines to stderr, which journald turns into
/// properly prioritised journal entries when the daemon runs under systemd; or, once the
/// daemon installs one, through a structured ``journal`` writer that keeps fields.
package enum Log {
    /// The most verbose level still written. Set once at start-up, before any other thread logs.
    nonisolated(unsafe) public static var maximumLevel: LogLevel = .info

    /// Writes one entry with its fields (`MESSAGE_ID`, `REACHABILITY_STATUS`…) to the journal;
    /// nil writes lines to stderr (fields dropped). Set once at start-up, before any other
    /// thread logs: the daemon sets it when its stderr is the journal.
    nonisolated(unsafe) public static var journal: (@Sendable (LogLevel, String, [(name: String, value: String)]) -> Void)?

    /// Writes `message` at `level` with journal `fields` if `level` is enabled.
    package static func write(_ level: LogLevel, _ message: @autoclosure () -> String, fields: [(name: String, value: String)]) {
        guard level <= maximumLevel else { return }
        if let journal { return journal(level, message(), fields) }
        write(level, message())
    }

    /// Writes `message` at `level` if `level` is enabled.
    package static func write(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= maximumLevel else { return }
        if let journal { return journal(level, message(), []) }
        writeLine(level, message())
    }

    /// Whether lines carry the `<priority>` prefix: for journald and other readers of a pipe or
    /// file, not for a person at a terminal (`make run`).
    private static let prefixesPriority = isatty(STDERR_FILENO) == 0

    /// Writes `<priority>message` (`message` on a terminal) and a newline to stderr, whatever the
    /// level and the journal writer (the journal writer's fallback when the journal refuses an
    /// entry).
    package static func writeLine(_ level: LogLevel, _ message: String) {
        let line = prefixesPriority ? "<\(level.rawValue)>\(message)\n" : "\(message)\n"
        var bytes = Array(line.utf8)
        // One write(2) per line so concurrent lines never interleave; stderr is unbuffered.
        _ = bytes.withUnsafeMutableBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Logs at `.error`.
    package static func error(_ message: @autoclosure () -> String) { write(.error, message()) }
    /// Logs at `.warning`.
    package static func warning(_ message: @autoclosure () -> String) { write(.warning, message()) }
    /// Logs at `.notice`.
    package static func notice(_ message: @autoclosure () -> String) { write(.notice, message()) }
    /// Logs at `.info`.
    package static func info(_ message: @autoclosure () -> String) { write(.info, message()) }
    /// Logs at `.debug`.
    package static func debug(_ message: @autoclosure () -> String) { write(.debug, message()) }
}
