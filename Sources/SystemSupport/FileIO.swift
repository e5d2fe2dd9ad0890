#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `bytes` to `descriptor`, across partial writes and `EINTR`.
/// The corresponding C function is `write`.
///
/// - Throws: ``SystemError`` with the errno of the failing `write` (`EIO` for a write of 0).
package func writeAll(_ bytes: [UInt8], to descriptor: Int32, action: @autoclosure () -> String) throws(SystemError) {
    var offset = 0
    while offset < bytes.count {
        let written = try valueOrErrno(action()) {
            bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        }
        guard written > 0 else { throw SystemError(action: action(), errno: EIO) }
        offset += written
    }
}

/// The text of a small file (at most `limit` bytes are read), or nil when it cannot be opened or read.
/// The corresponding C functions are `open` and `read`.
package func readSmallFile(_ path: String, limit: Int = 1 << 20) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while bytes.count < limit {
        guard let count = try? valueOrErrno("read \(path)", { chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } }) else {
            return nil
        }
        guard count > 0 else { break }
        bytes += chunk[..<min(count, limit - bytes.count)]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Seconds on `clock` (`CLOCK_MONOTONIC`, `CLOCK_REALTIME`, `CLOCK_THREAD_CPUTIME_ID`...).
/// The corresponding C function is `clock_gettime`.
package func clockSeconds(_ clock: clockid_t) -> Double {
    Double(clockNanoseconds(clock)) / 1e9
}

/// Nanoseconds on `clock`, as an integer (exact where ``clockSeconds(_:)``'s Double rounds).
/// The corresponding C function is `clock_gettime`.
package func clockNanoseconds(_ clock: clockid_t) -> UInt64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
