#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs code under test in a forked child, so that a trap (an overflow, a bounds check) fails
/// one test with the input that caused it instead of killing the whole test run.
///
/// The child does pure work only: no XCTest calls, no I/O except `_exit`.
enum ForkedChild {
    /// How the child ended.
    enum Outcome: Equatable, CustomStringConvertible {
        /// It returned `status` from the body.
        case exited(status: Int32)
        /// It trapped or was killed by `signal`.
        case crashed(signal: Int32)

        var description: String {
            switch self {
            case let .exited(status): "exited with status \(status)"
            case let .crashed(signal): "crashed with signal \(signal) (\(String(cString: strsignal(signal))))"
            }
        }
    }

    /// Forks, runs `body` in the child and returns how the child ended.
    ///
    /// In the child, trap signals end the process at once with status 128 + signal (quietly,
    /// instead of through the runtime's backtracer) and stderr goes to /dev/null.
    static func run(_ body: () -> Int32) -> Outcome {
        fflush(nil)  // every stdio stream, so the child does not repeat buffered output
        let pid = fork()
        precondition(pid >= 0, "fork failed: errno \(errno)")
        if pid == 0 {
            for trap in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT] {
                signal(trap) { _exit(128 + $0) }
            }
            let devNull = open("/dev/null", O_WRONLY)
            if devNull >= 0 { dup2(devNull, STDERR_FILENO) }
            _exit(body())
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            precondition(errno == EINTR, "waitpid failed: errno \(errno)")
        }
        let signal = status & 0x7f  // WTERMSIG
        if signal != 0 { return .crashed(signal: signal) }
        let exitStatus = (status >> 8) & 0xff  // WEXITSTATUS
        return exitStatus >= 128 ? .crashed(signal: exitStatus - 128) : .exited(status: exitStatus)
    }
}

/// Integers shared between the test process and its forked children (an anonymous shared
/// mapping): the child writes its progress, the parent reads it after the child has ended.
final class SharedCounters {
    private let words: UnsafeMutablePointer<Int>
    let count: Int

    init(count: Int) {
        self.count = count
        let size = count * MemoryLayout<Int>.stride
        let mapping = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
        precondition(mapping != nil && mapping != UnsafeMutableRawPointer(bitPattern: -1), "mmap failed: errno \(errno)")
        words = mapping!.bindMemory(to: Int.self, capacity: count)
        words.initialize(repeating: 0, count: count)
    }

    deinit {
        munmap(words, count * MemoryLayout<Int>.stride)
    }

    subscript(index: Int) -> Int {
        get { words[index] }
        set { words[index] = newValue }
    }
}
