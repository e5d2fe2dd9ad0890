import RTNetlink
import SystemSupport

/// Logs each distinct rtnetlink parse error once, so that a malformed message the kernel keeps
/// sending cannot flood the journal, while a new kind of malformation is still reported.
struct ParseErrorLog {
    private var logged: Set<NetlinkParseError> = []
    private let write: (String) -> Void

    /// Creates a log writing through `write` (a warning in the journal by default; tests record).
    init(write: @escaping (String) -> Void = { Log.warning($0) }) {
        self.write = write
    }

    /// Writes "Failed to parse `what`: error, ignoring." for each error not written before.
    ///
    /// - Parameters:
    ///   - errors: the errors of one batch or dump, in order.
    ///   - what: what was being parsed, e.g. "rtnetlink message".
    mutating func report(_ errors: [NetlinkParseError], parsing what: String) {
        for error in errors where logged.insert(error).inserted {
            write("Failed to parse \(what): \(error), ignoring.")
        }
    }
}
