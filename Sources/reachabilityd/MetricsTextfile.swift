#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
import SystemSupport

/// Keeps `reachabilityd.prom` current in node_exporter's textfile-collector directory
/// (`[Metrics] TextfileDirectory=`): replaced atomically on every published change and every
/// ``rewriteInterval`` (so that node_exporter's `node_textfile_mtime_seconds` shows the daemon
/// alive, and the not-reachable seconds go on counting in the file), moved when the setting
/// changes, removed when it is emptied and when the daemon stops (a stopped daemon leaves no
/// stale figures behind; the unit's `ExecStopPost=` removes it after any other end). A failure
/// is logged once per directory and error, and the next write tries again. Confined to the
/// daemon's queue; the timer runs only while a directory is set.
final class MetricsTextfile {
    /// How often the file is rewritten without a change: slow enough to cost nothing (one wake-up
    /// a minute, only with a directory set), fast enough for a staleness alert of a few minutes.
    static let rewriteInterval = DispatchTimeInterval.seconds(60)

    /// `[Metrics] TextfileDirectory=`: where the file goes; "" when off. Changing it removes
    /// the file from the previous directory and starts or stops the rewrite timer; the next
    /// ``write()`` puts the file in the new one.
    var directory = "" {
        didSet {
            guard directory != oldValue else { return }
            Self.remove(from: oldValue)
            lastFailure = nil
            directory.isEmpty ? stopTimer() : startTimer()
        }
    }
    private let queue: DispatchQueue
    private let interval: DispatchTimeInterval
    private let render: () -> String?
    private var timer: DispatchSourceTimer?
    private var lastFailure: String?

    /// A file with the text `render` gives (nil: nothing published yet, nothing to write),
    /// rewritten on `queue` (the daemon's) every `interval` (tests shorten it).
    init(queue: DispatchQueue, interval: DispatchTimeInterval = rewriteInterval, render: @escaping () -> String?) {
        self.queue = queue
        self.interval = interval
        self.render = render
    }

    deinit {
        timer?.cancel()
    }

    /// Replaces the file with the current text, when a directory is set (the text is rendered
    /// only then: without one, a published change costs no metrics text).
    func write() {
        guard !directory.isEmpty, let text = render() else { return }
        do throws(SystemError) {
            try replaceFileAtomically(Self.path(in: directory), with: text)
            lastFailure = nil
        } catch {
            // A full or read-only directory fails every write: say so once, until it works again.
            guard lastFailure != error.description else { return }
            lastFailure = error.description
            Log.warning("\(error); the metrics for node_exporter are not updated (TextfileDirectory=\(directory)).")
        }
    }

    /// Removes the file, if one was written, and stops the rewrites.
    func remove() {
        stopTimer()
        Self.remove(from: directory)
    }

    /// Removes `reachabilityd.prom` from `directory` ("" : nothing to do); a missing file is no error.
    static func remove(from directory: String) {
        guard !directory.isEmpty else { return }
        let path = path(in: directory)
        if unlink(path) != 0, errno != ENOENT {
            Log.warning("\(SystemError(action: "remove \(path)", errno: errno)), ignoring.")
        }
    }

    private func startTimer() {
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.write() }
        timer.activate()
        self.timer = timer
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
    }

    private static func path(in directory: String) -> String {
        directory + "/" + PrometheusMetrics.fileName
    }
}
