#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import ReachabilityCore
import SystemSupport

/// Structured journal entries: when the daemon's stderr is the journal (systemd sets
/// `$JOURNAL_STREAM` to its device and inode), log entries go through `sd_journal_sendv` with
/// their fields instead of as `<N>` lines, so that `journalctl MESSAGE_ID=…` finds them and
/// `journalctl -x` explains them from the catalog (`reachabilityd.catalog`).
package enum JournalLog {
    /// `MESSAGE_ID` of "status changed" entries (the catalog explains it).
    package static let statusChangedMessageID = "4afbbecd892743e583b58432607723ed"
    /// `MESSAGE_ID` of "connectivity changed" entries: `Connectivity` changed, `Status` did not.
    package static let connectivityChangedMessageID = "199e5802915c48d9b0b8fd390df39f19"
    /// `SYSLOG_IDENTIFIER` of the entries.
    static let identifier = "reachabilityd"

    /// Installs the journal writer in ``Log/journal`` when stderr is the journal; returns
    /// whether it did. Call once at start-up, before any other thread logs.
    @discardableResult
    package static func installIfStderrIsTheJournal() -> Bool {
        guard stderrIsTheJournal() else { return false }
        Log.journal = { level, message, fields in send(level, message, fields) }
        return true
    }

    /// The fields of the entry for publishing `snapshot` after `previous` (nil: the first):
    /// a "status changed" `MESSAGE_ID` when `Status` changed, a "connectivity changed" one when
    /// only `Connectivity` did, none for a change of the entry's other fields alone; nil (no
    /// entry) when none of its fields changed: an announcement of `Interfaces` or another
    /// property the line does not name writes nothing (a burst of container links would
    /// otherwise repeat the same line 4 times a second).
    package static func publishedFields(_ snapshot: ReachabilitySnapshot, previous: ReachabilitySnapshot?) -> [(name: String, value: String)]? {
        let fields = statusFields(snapshot)
        if let previous, statusFields(previous).map(\.value) == fields.map(\.value) { return nil }
        let messageID: String? = if previous?.status != snapshot.status {
            statusChangedMessageID
        } else if previous?.connectivity != snapshot.connectivity {
            connectivityChangedMessageID
        } else {
            nil
        }
        return (messageID.map { [("MESSAGE_ID", $0)] } ?? []) + fields
    }

    /// What a status entry says of `snapshot`, as journal fields.
    private static func statusFields(_ snapshot: ReachabilitySnapshot) -> [(name: String, value: String)] {
        [
            ("REACHABILITY_STATUS", snapshot.status.rawValue),
            ("REACHABILITY_INTERFACE", snapshot.interface),
            ("REACHABILITY_TRANSPORT", snapshot.transport?.rawValue ?? ""),
            ("REACHABILITY_REASON", snapshot.reason),
            ("REACHABILITY_CONNECTIVITY", snapshot.connectivity.rawValue),
            ("REACHABILITY_DNS", snapshot.dns.rawValue),
            ("REACHABILITY_CAPTIVE_PORTAL", snapshot.captivePortal),
        ]
    }

    /// One entry: `MESSAGE=`, `PRIORITY=`, `SYSLOG_IDENTIFIER=` and `fields`, as `NAME=value`
    /// iovecs. The corresponding C function is `sd_journal_sendv`; a failure falls back to stderr.
    private static func send(_ level: LogLevel, _ message: String, _ fields: [(name: String, value: String)]) {
        let entries = [("MESSAGE", message), ("PRIORITY", String(level.rawValue)), ("SYSLOG_IDENTIFIER", identifier)] + fields
        // One buffer holding every NAME=value, and an iovec per entry pointing into it.
        let encoded = entries.map { Array("\($0.0)=\($0.1)".utf8) }
        var storage = encoded.flatMap { $0 }
        let result = storage.withUnsafeMutableBytes { bytes -> Int32 in
            var offset = 0
            let vectors = encoded.map { entry -> iovec in
                defer { offset += entry.count }
                return iovec(iov_base: bytes.baseAddress! + offset, iov_len: entry.count)
            }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
        if result < 0 { Log.writeLine(level, message) }
    }
}
