import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A network namespace of one test: `lo` up and a veth pair `ra0`/`ra1`, both ends inside it.
///
/// Every `ip` command carries `-n NAME`: the tests never touch the host's interfaces or routes.
/// The namespace is deleted by `delete()` or at `deinit`.
final class TestNamespace {
    /// Numbers namespaces within this test process.
    private static let sequence = Atomic<Int>(0)

    /// The namespace's name, `rtest-<pid>-<n>`: unique on the machine while this process lives.
    let name: String
    private var isDeleted = false

    /// Creates the namespace and its links.
    ///
    /// - Throws: `HarnessError` with `ip`'s stderr when a command fails.
    init() throws {
        let number = Self.sequence.wrappingAdd(1, ordering: .relaxed).newValue
        name = "rtest-\(getpid())-\(number)"
        try Command.run("ip", ["netns", "add", name]).check()
        do {
            try ip("link", "add", "ra0", "type", "veth", "peer", "name", "ra1")
            try ip("link", "set", "lo", "up")
        } catch {
            delete()
            throw error
        }
    }

    deinit {
        delete()
    }

    /// Runs `ip -n NAME ARGUMENTS…`.
    ///
    /// - Parameter arguments: what follows `-n NAME`, e.g. `"addr", "add", "10.0.0.2/24", "dev", "ra0"`.
    /// - Returns: what `ip` printed.
    /// - Throws: `HarnessError` with the command and its stderr when it exits non-zero.
    @discardableResult
    func ip(_ arguments: String...) throws -> String {
        try Command.run("ip", ["-n", name] + arguments).check().standardOutput
    }

    /// Deletes the namespace; harmless when repeated. Stop processes inside it first.
    func delete() {
        guard !isDeleted else { return }
        isDeleted = true
        _ = try? Command.run("ip", ["netns", "delete", name])
    }
}
