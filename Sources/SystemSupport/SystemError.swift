#if canImport(Glibc)
import Glibc
#endif

/// A failed C call: which call, the errno it set (or returned), and an optional context.
///
/// Its description reads the way systemd's daemons log:
/// `Failed to open netlink socket: Operation not permitted`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was being done, as in "Failed to <action>" (e.g. "open netlink socket").
    public var action: String
    /// The errno value (positive).
    public var errno: Int32

    /// Creates an error for `action` that failed with `errno` (positive).
    public init(action: String, errno: Int32) {
        self.action = action
        self.errno = errno
    }

    /// The C library's text for `errno`, e.g. "Operation not permitted".
    public var errnoDescription: String { Self.describe(errno: errno) }

    /// "Failed to <action>: <strerror(errno)>".
    public var description: String { "Failed to \(action): \(errnoDescription)" }

    /// `strerror` for `errno`, thread-safe (`strerror_r`, XSI variant as Swift imports it).
    public static func describe(errno value: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let result = buffer.withUnsafeMutableBufferPointer { strerror_r(value, $0.baseAddress!, $0.count) }
        guard result == 0 else { return "errno \(value)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Runs a C call that returns -1 and sets `errno` on failure, retrying on `EINTR`.
///
/// - Parameters:
///   - action: what the call does, for the error text ("bind netlink socket").
///   - body: the call.
/// - Returns: the call's non-negative result.
/// - Throws: ``SystemError`` with the errno the call set.
@discardableResult
package func valueOrErrno<Result: BinaryInteger>(_ action: @autoclosure () -> String, _ body: () -> Result) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(action: action(), errno: code)
    }
}

/// Runs a C call that returns a negative errno on failure (the sd-bus convention).
///
/// - Parameters:
///   - action: what the call does, for the error text ("acquire bus name").
///   - body: the call.
/// - Returns: the call's non-negative result.
/// - Throws: ``SystemError`` with the negated result as errno.
@discardableResult
package func sdCall(_ action: @autoclosure () -> String, _ body: () -> Int32) throws(SystemError) -> Int32 {
    let result = body()
    if result >= 0 { return result }
    throw SystemError(action: action(), errno: -result)
}
