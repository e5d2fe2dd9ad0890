import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension TestNamespace {
    /// Runs `body` on a short-lived thread that has entered this namespace and returns what it
    /// returned. `setns` changes only the calling thread's namespace, so the test process stays
    /// where it is; sockets and devices opened in `body` belong to the namespace for good.
    ///
    /// - Throws: `HarnessError` naming the failing call and errno, or what `body` failed with.
    ///
    /// The corresponding C calls are `open("/run/netns/NAME")` and `setns(CLONE_NEWNET)`.
    package func runInside<Value: Sendable>(_ body: @escaping @Sendable () -> Result<Value, HarnessError>) throws -> Value {
        let namespacePath = "/run/netns/\(name)"
        let outcome = Mutex<Result<Value, HarnessError>>(.failure(HarnessError("the namespace thread did not run")))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            outcome.withLock { $0 = Self.enter(namespacePath).flatMap { body() } }
        }
        thread.start()
        done.wait()
        return try outcome.withLock { try $0.get() }
    }

    /// `CLONE_NEWNET` (<sched.h>, behind `_GNU_SOURCE`, which Swift's Glibc module does not set).
    private static let cloneNewNetwork: Int32 = 0x4000_0000

    /// `setns(2)`: declared behind `_GNU_SOURCE`, so looked up in libc at run time.
    private static let setNamespace: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0) /* RTLD_DEFAULT */, "setns") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    /// Moves the calling thread into the namespace at `namespacePath`.
    private static func enter(_ namespacePath: String) -> Result<Void, HarnessError> {
        let namespaceDescriptor = open(namespacePath, O_RDONLY | O_CLOEXEC)
        guard namespaceDescriptor >= 0 else { return .failure(.lastError("open \(namespacePath)")) }
        defer { _ = close(namespaceDescriptor) }
        guard let setNamespace else { return .failure(HarnessError("libc has no setns")) }
        guard setNamespace(namespaceDescriptor, cloneNewNetwork) == 0 else { return .failure(.lastError("setns(\(namespacePath), CLONE_NEWNET)")) }
        return .success(())
    }
}

extension HarnessError {
    /// "Failed to CALL: strerror(errno)" for the call that just failed.
    package static func lastError(_ call: String) -> HarnessError {
        HarnessError("Failed to \(call): \(String(cString: strerror(errno)))")
    }
}
