#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import SystemSupport

/// Keeps `reachabilityd.prom` current in node_exporter's textfile-collector directory
/// (`[Metrics] TextfileDirectory=`): replaced atomically on every published change, moved when
/// the setting changes, removed when it is emptied and when the daemon stops (a stopped daemon
/// leaves no stale figures behind; the collector then reports none). A failure is logged once
/// per directory and error, and the next change tries again. Confined to the daemon's queue.
final class MetricsTextfile {
    /// `[Metrics] TextfileDirectory=`: where the file goes; "" when off. Changing it removes
    /// the file from the previous directory; the next ``write(_:)`` puts it in the new one.
    var directory = "" {
        didSet {
            guard directory != oldValue else { return }
            remove(from: oldValue)
            lastFailure = nil
        }
    }
    private var lastFailure: String?

    /// Replaces the file with `text`, when a directory is set (the text is rendered only then:
    /// without one, a published change costs no metrics text).
    func write(_ text: @autoclosure () -> String) {
        guard !directory.isEmpty else { return }
        do throws(SystemError) {
            try replaceFileAtomically(path(in: directory), with: text())
            lastFailure = nil
        } catch {
            // A full or read-only directory fails every change: say so once, until it works again.
            guard lastFailure != error.description else { return }
            lastFailure = error.description
            Log.warning("\(error); the metrics for node_exporter are not updated (TextfileDirectory=\(directory)).")
        }
    }

    /// Removes the file, if one was written.
    func remove() {
        remove(from: directory)
    }

    private func remove(from directory: String) {
        guard !directory.isEmpty else { return }
        if unlink(path(in: directory)) != 0, errno != ENOENT {
            Log.warning("\(SystemError(action: "remove \(path(in: directory))", errno: errno)), ignoring.")
        }
    }

    private func path(in directory: String) -> String {
        directory + "/" + PrometheusMetrics.fileName
    }
}
