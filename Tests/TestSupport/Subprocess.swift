import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
package enum Termination: Equatable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal killed it.
    case signalled(Int32)

    /// Decodes a `waitpid` status (the `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG` macros, which Swift
    /// cannot import).
    ///
    /// - Parameter status: the status `waitpid` stored.
    package init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    package var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .signalled(let signal): "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
        }
    }
}

/// A child process started with `posix_spawnp`, with an empty signal mask and default signal
/// handlers, stdin from `/dev/null` and stdout/stderr sent to files.
///
/// Foundation's `Process` hands the spawning thread's blocked signal mask to the child, which then
/// ignores the SIGTERM the tests send; spawning directly sets both explicitly. (The harness opens
/// its own descriptors close-on-exec; `posix_spawn_file_actions_addclosefrom_np` is not imported
/// by Swift's Glibc module.) A child still running at `deinit` is killed and reaped.
package final class ChildProcess {
    /// The child's process id.
    package let pid: pid_t
    /// The command line, for messages.
    package let commandLine: String
    /// How the child ended, once reaped.
    package private(set) var termination: Termination?

    /// Starts a child.
    ///
    /// - Parameters:
    ///   - executable: a path, or a name looked up in `PATH`.
    ///   - arguments: the arguments after `argv[0]`.
    ///   - environment: variables to set on top of this process's environment.
    ///   - standardOutput: the file stdout is written to (truncated); `/dev/null` when nil.
    ///   - standardError: the file stderr is written to (truncated); `/dev/null` when nil; when it
    ///     equals `standardOutput`, stderr shares stdout's open file.
    /// - Throws: `HarnessError` when `posix_spawnp` fails.
    ///
    /// The corresponding C function is `posix_spawnp`.
    package init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        standardOutput: String? = nil,
        standardError: String? = nil
    ) throws {
        commandLine = ([executable] + arguments).joined(separator: " ")

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let outputFlags = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput ?? "/dev/null", outputFlags, 0o644)
        if let standardError, standardError == standardOutput {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, standardError ?? "/dev/null", outputFlags, 0o644)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaulted = sigset_t()
        sigemptyset(&defaulted)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD] {
            sigaddset(&defaulted, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaulted)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }

        var child: pid_t = 0
        let result = posix_spawnp(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw HarnessError("Failed to spawn \(commandLine): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    deinit {
        if termination == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
    }

    /// Reaps the child if it has ended, without blocking.
    ///
    /// - Returns: how it ended, or nil while it runs.
    ///
    /// The corresponding C function is `waitpid` with `WNOHANG`.
    @discardableResult
    package func poll() -> Termination? {
        if let termination { return termination }
        var status: Int32 = 0
        var reaped: pid_t
        repeat {
            reaped = waitpid(pid, &status, WNOHANG)
        } while reaped == -1 && errno == EINTR
        if reaped == pid {
            termination = Termination(waitStatus: status)
        }
        return termination
    }

    /// Waits, polling, up to `timeout` for the child to end.
    ///
    /// - Parameter timeout: how long to wait.
    /// - Returns: how it ended, or nil if it still runs.
    package func wait(timeout: Duration) -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while poll() == nil && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)  // the poll interval
        }
        return poll()
    }

    /// Sends a signal unless the child has been reaped.
    ///
    /// - Parameter signal: the signal, e.g. `SIGTERM`.
    ///
    /// The corresponding C function is `kill`.
    package func send(_ signal: Int32) {
        if poll() == nil { kill(pid, signal) }
    }

    /// Ends the child: SIGTERM, then SIGKILL if it has not ended after `grace`.
    ///
    /// - Parameter grace: how long SIGTERM has to work.
    /// - Returns: how it ended.
    @discardableResult
    package func terminate(grace: Duration = .seconds(1)) -> Termination {
        send(SIGTERM)
        if let ended = wait(timeout: grace) { return ended }
        send(SIGKILL)
        return wait(timeout: .seconds(5)) ?? .signalled(SIGKILL)
    }
}

/// The outcome of a command run to completion.
package struct CommandResult: Sendable {
    /// The command line, for messages.
    package var commandLine: String
    /// How it ended.
    package var termination: Termination
    /// Everything it wrote to stdout.
    package var standardOutput: String
    /// Everything it wrote to stderr.
    package var standardError: String

    /// It exited with status 0.
    package var succeeded: Bool { termination == .exited(0) }

    /// Returns `self` when the command succeeded.
    ///
    /// - Throws: `HarnessError` with the command line, how it ended and its stderr otherwise.
    @discardableResult
    package func check() throws -> CommandResult {
        guard succeeded else {
            throw HarnessError("`\(commandLine)` failed (\(termination)): \(standardError)\(standardOutput)")
        }
        return self
    }
}

/// Runs short commands to completion.
package enum Command {
    /// Runs a command, capturing stdout and stderr through temporary files.
    ///
    /// - Parameters:
    ///   - executable: a path, or a name looked up in `PATH`.
    ///   - arguments: the arguments.
    ///   - environment: variables to set on top of this process's environment.
    ///   - timeout: how long the command may take before it is killed and the call throws.
    /// - Returns: how it ended and what it wrote.
    /// - Throws: `HarnessError` when it cannot start or does not end in time.
    package static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        timeout: Duration = .seconds(10)
    ) throws -> CommandResult {
        let base = "/tmp/reachabilityd-itest-\(getpid())-\(UUID().uuidString)"
        let outputPath = base + ".out"
        let errorPath = base + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        let child = try ChildProcess(
            executable, arguments, environment: environment,
            standardOutput: outputPath, standardError: errorPath
        )
        guard let termination = child.wait(timeout: timeout) else {
            child.terminate()
            throw HarnessError("`\(child.commandLine)` did not finish within \(timeout)")
        }
        return CommandResult(
            commandLine: child.commandLine,
            termination: termination,
            standardOutput: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        )
    }
}
