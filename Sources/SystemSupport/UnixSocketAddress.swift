#if canImport(Glibc)
import Glibc
#endif

/// The address of a Unix socket, for the daemon's notifications to the service manager, its
/// Varlink socket and the client's connection to it.
package enum UnixSocketAddress {
    /// The `sockaddr_un` for `value`, as `sd_notify` reads `$NOTIFY_SOCKET`: an absolute path,
    /// or an abstract name written with a leading `@`; nil for anything else.
    package static func of(_ value: String) -> (address: sockaddr_un, length: socklen_t)? {
        let bytes = Array(value.utf8)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "/") || bytes[0] == UInt8(ascii: "@"), bytes.count <= capacity
        else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: bytes)
            if bytes[0] == UInt8(ascii: "@") { path[0] = 0 }
        }
        // An abstract name's length is exactly its bytes; a path's includes its NUL (as
        // libsystemd's SOCKADDR_UN_LEN: a path of the whole capacity is then refused, EINVAL).
        let pathLength = bytes[0] == UInt8(ascii: "@") ? bytes.count : bytes.count + 1
        return (address, socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathLength))
    }
}
