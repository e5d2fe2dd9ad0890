import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The daemon under test, run inside a test namespace against a private bus:
/// `ip netns exec NS reachabilityd --log-level debug [--sysfs-root DIR] [ARGUMENTS…]`.
///
/// `ip netns exec` execs the daemon in place, so the child's pid is the daemon's and SIGTERM
/// reaches it directly. Its stdout and stderr go to `logPath`.
package final class DaemonProcess {
    /// The file holding the daemon's stderr (and stdout).
    package let logPath: String
    private let process: ChildProcess
    private let notifySocket: NotifySocket

    /// Starts the daemon; it is not ready until `waitUntilReady()` returns.
    ///
    /// - Parameters:
    ///   - binary: the daemon executable.
    ///   - namespace: the namespace to run it in.
    ///   - busAddress: the value of `DBUS_SYSTEM_BUS_ADDRESS`.
    ///   - directory: where the log and the notification socket go.
    ///   - sysfsRoot: passed as `--sysfs-root` when not nil.
    ///   - arguments: further arguments, e.g. `["--config", PATH]`.
    ///   - environment: further environment variables, e.g. `WATCHDOG_USEC`.
    ///   - hiding: files the daemon must find unusable, as on a host without them (e.g. a
    ///     library it loads with `dlopen`): `/dev/null` is bind-mounted over each in the private
    ///     mount namespace `ip netns exec` makes, so nothing outside the daemon sees it.
    /// - Throws: `HarnessError` when it cannot be started.
    /// The daemon's `--networkd-leases`, in the test's directory: a test writes a lease there
    /// in networkd's format.
    package static let networkdLeaseDirectory = "networkd-leases"

    package init(
        binary: String,
        namespace: TestNamespace,
        busAddress: String,
        directory: TemporaryDirectory,
        sysfsRoot: String? = nil,
        arguments extraArguments: [String] = [],
        environment extraEnvironment: [String: String] = [:],
        hiding hiddenFiles: [String] = []
    ) throws {
        logPath = directory.file("reachabilityd.log")
        notifySocket = try NotifySocket(path: directory.file("notify"))
        // As systemd's RuntimeDirectory= does: where Generation is kept across restarts.
        let runtimeDirectory = directory.file("runtime")
        try FileManager.default.createDirectory(atPath: runtimeDirectory, withIntermediateDirectories: true)
        var arguments = ["netns", "exec", namespace.name]
        if !hiddenFiles.isEmpty {
            // (sh execs the daemon in place: its pid stays the child's.)
            arguments += ["sh", "-c", #"for file in "$@"; do [ "$file" = -- ] && shift && break; mount --bind /dev/null "$file" || exit 1; shift; done; exec "$@""#, "sh"]
                + hiddenFiles + ["--"]
        }
        arguments += [binary, "--log-level", "debug"]
        if let sysfsRoot { arguments += ["--sysfs-root", sysfsRoot] }
        // Never the host's networkd leases: their link indices are the host's.
        if !extraArguments.contains("--networkd-leases") {
            let leases = directory.file(Self.networkdLeaseDirectory)
            try FileManager.default.createDirectory(atPath: leases, withIntermediateDirectories: true)
            arguments += ["--networkd-leases", leases]
        }
        arguments += extraArguments
        process = try ChildProcess(
            "ip", arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress, "NOTIFY_SOCKET": notifySocket.path, "RUNTIME_DIRECTORY": runtimeDirectory]
                .merging(extraEnvironment) { _, extra in extra },
            standardOutput: logPath, standardError: logPath
        )
    }

    /// The daemon's process id (`ip netns exec` execs it in place).
    package var pid: pid_t {
        process.pid
    }

    /// Everything the daemon has logged so far.
    package var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// How the daemon ended, or nil while it runs.
    package var termination: Termination? {
        process.poll()
    }

    /// Waits until the daemon sends `READY=1` to its notification socket.
    ///
    /// - Parameter timeout: the deadline.
    /// - Throws: `HarnessError` with the daemon's log when it exits first or the deadline passes.
    package func waitUntilReady(timeout: Duration = Poll.defaultTimeout) throws {
        do {
            try Poll.until("READY=1 on NOTIFY_SOCKET", timeout: timeout) {
                if let ended = process.poll() {
                    throw HarnessError("reachabilityd exited (\(ended)) before READY=1")
                }
                return notifySocket.hasReceivedReady
            }
        } catch let error as HarnessError {
            throw HarnessError("\(error.description)\n--- reachabilityd log ---\n\(log)")
        }
    }

    /// Undoes `hiding` for `files`, as if they had been installed since the daemon started:
    /// unmounts what covers them in the daemon's mount namespace (`nsenter`).
    ///
    /// - Parameter files: files given to `hiding`.
    /// - Throws: `HarnessError` when `umount` fails.
    package func reveal(_ files: [String]) throws {
        for file in files {
            try Command.run("nsenter", ["--target", String(pid), "--mount", "umount", file]).check()
        }
    }

    /// Sends a signal to the running daemon, e.g. `SIGHUP` to reload its configuration.
    ///
    /// - Parameter signal: the signal.
    package func send(_ signal: Int32) {
        process.send(signal)
    }

    /// Whether `stop` has been called.
    package private(set) var wasStopped = false

    /// Stops the daemon with a signal, killing it if it has not ended after `grace`.
    ///
    /// - Parameters:
    ///   - signal: `SIGTERM` or `SIGINT`.
    ///   - grace: how long the daemon has to shut down.
    /// - Returns: how it ended within `grace`, or nil if it had to be killed.
    package func stop(signal: Int32 = SIGTERM, grace: Duration = .seconds(1)) -> Termination? {
        wasStopped = true
        defer {
            notifySocket.receive()
            notifySocket.close()
        }
        if let ended = process.poll() { return ended }
        process.send(signal)
        if let ended = process.wait(timeout: grace) { return ended }
        process.terminate(grace: .zero)
        return nil
    }

    /// Reads the daemon's notifications in the background from now on, so that a burst of
    /// `STATUS=` messages cannot fill the socket and block the daemon (see `NotifySocket`).
    package func drainNotificationsInBackground() {
        notifySocket.startDraining()
    }

    /// The notification messages received so far, e.g. `READY=1`, `STATUS=…`, `STOPPING=1`.
    package var notifications: [String] {
        notifySocket.receive()
    }

    /// When each notification holding `line` (e.g. `WATCHDOG=1`) arrived, in `CLOCK_MONOTONIC`
    /// seconds (arrival times while draining in the background).
    package func notificationArrivals(of line: String) -> [Double] {
        notifySocket.arrivals(of: line)
    }
}
