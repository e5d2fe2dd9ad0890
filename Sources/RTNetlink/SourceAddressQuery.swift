#if canImport(Glibc)
import Glibc
#endif
import CNetlinkShims
import NetworkTypes
import SystemSupport

/// Asks the kernel which source address an application's connection to a destination would
/// get: a UDP socket is connected to the destination and `getsockname` reads the address the
/// kernel chose (its own source selection: route `src` hints, policy rules, IPv6 source-specific
/// routes, addresses on other links). Connecting a UDP socket sends no packet.
///
/// One socket per family is kept and disconnected (`AF_UNSPEC`) after every question, which
/// gives it back the state of a new socket: no address, no port, no device — a link-local
/// destination's zone binds the socket to its link, even when the connect then fails. A socket
/// that cannot be disconnected is closed, and the next question opens another.
///
/// Not thread-safe: owned by one serial queue.
/// The corresponding C functions are `socket`, `connect`, `getsockname` and `close`.
package final class SourceAddressQuery {
    /// The probe's flow: UDP to port 443. UDP sends nothing on `connect` (a TCP `connect` would
    /// send a SYN), so the probe cannot be the TCP flow most applications open; policy rules on
    /// `ipproto` can tell the two apart, which the caller checks with route lookups carrying
    /// this flow's keys and the TCP flow's.
    package static let flow = FlowKeys(.udp, destinationPort: 443)

    /// The open socket per netlink family (`AF_INET`, `AF_INET6`).
    private var sockets: [UInt8: Int32] = [:]

    /// Opens the sockets when first needed.
    package init() {}

    deinit {
        close()
    }

    /// Closes the sockets; a later question opens them again.
    package func close() {
        for descriptor in sockets.values { _ = Glibc.close(descriptor) }
        sockets = [:]
    }

    /// The source address the kernel selects toward `destination`.
    ///
    /// - Parameters:
    ///   - destination: the destination (its zone is not looked at: `link` says it).
    ///   - link: the IPv6 zone's link (`sin6_scope_id`), for a link-local destination; nil for
    ///     none.
    /// - Returns: the source address (`0.0.0.0` when IPv4 found no address to use), or
    ///   the error `connect` gave (`ENETUNREACH` without a route, `EHOSTUNREACH`, `EACCES`,
    ///   `EINVAL` for unreachable, prohibit and blackhole routes, `EADDRNOTAVAIL` when IPv6 has
    ///   no source address, `EAFNOSUPPORT` when the family is disabled).
    package func source(toward destination: IPAddress, boundTo link: InterfaceIndex? = nil) -> Result<IPAddress, SystemError> {
        let family = destination.family.netlinkFamily
        return Result { () throws(SystemError) -> IPAddress in
            let descriptor: Int32
            if let open = sockets[family] {
                descriptor = open
            } else {
                descriptor = try valueOrErrno("open UDP socket") { socket(Int32(family), Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
                sockets[family] = descriptor
            }
            defer { disconnect(family) }
            var address = Self.socketAddress(destination.bytes, family: family, scopeID: UInt32(bitPattern: link?.rawValue ?? 0))
            _ = try address.withSocketAddress { pointer, length throws(SystemError) in
                try valueOrErrno("connect UDP socket of family \(family) to the probe destination") { connect(descriptor, pointer, length) }
            }
            var local = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = try withUnsafeMutablePointer(to: &local) { storage throws(SystemError) in
                try storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer throws(SystemError) in
                    try valueOrErrno("read the UDP socket's source address") { getsockname(descriptor, pointer, &length) }
                }
            }
            // (The bytes of a sockaddr_in or sockaddr_in6: always the family's length.)
            return IPAddress(family: destination.family, bytes: Self.addressBytes(of: local, family: family))!
        }
    }

    /// Dissolves the association of `family`'s socket (`connect` with `AF_UNSPEC`): address,
    /// port and bound device go; or closes the socket when that fails.
    private func disconnect(_ family: UInt8) {
        guard let descriptor = sockets[family] else { return }
        var unspecified = sockaddr_storage()
        unspecified.ss_family = sa_family_t(AF_UNSPEC)
        let length = socklen_t(family == IPAddressBytes.ipv4Family ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
        let dissolved = withUnsafePointer(to: &unspecified) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                (try? valueOrErrno("disconnect the UDP socket") { connect(descriptor, pointer, length) }) != nil
            }
        }
        if !dissolved {
            _ = Glibc.close(descriptor)
            sockets[family] = nil
        }
    }

    /// A `sockaddr_in` or `sockaddr_in6` for `address` and the flow's port (and `scopeID` for IPv6).
    private static func socketAddress(_ address: [UInt8], family: UInt8, scopeID: UInt32) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in
            if family == IPAddressBytes.ipv4Family {
                var ipv4 = sockaddr_in()
                ipv4.sin_family = sa_family_t(AF_INET)
                ipv4.sin_port = flow.destinationPort.bigEndian
                withUnsafeMutableBytes(of: &ipv4.sin_addr) { $0.copyBytes(from: address) }
                withUnsafeBytes(of: ipv4) { raw.copyMemory(from: $0) }
            } else {
                var ipv6 = sockaddr_in6()
                ipv6.sin6_family = sa_family_t(AF_INET6)
                ipv6.sin6_port = flow.destinationPort.bigEndian
                ipv6.sin6_scope_id = scopeID
                withUnsafeMutableBytes(of: &ipv6.sin6_addr) { $0.copyBytes(from: address) }
                withUnsafeBytes(of: ipv6) { raw.copyMemory(from: $0) }
            }
        }
        return storage
    }

    /// The address bytes of a `sockaddr_in` / `sockaddr_in6` held in `storage`.
    private static func addressBytes(of storage: sockaddr_storage, family: UInt8) -> [UInt8] {
        withUnsafeBytes(of: storage) { raw in
            if family == IPAddressBytes.ipv4Family {
                let ipv4 = raw.load(as: sockaddr_in.self)
                return withUnsafeBytes(of: ipv4.sin_addr) { Array($0) }
            }
            let ipv6 = raw.load(as: sockaddr_in6.self)
            return withUnsafeBytes(of: ipv6.sin6_addr) { Array($0) }
        }
    }
}

extension sockaddr_storage {
    /// Calls `body` with the storage as a `sockaddr` pointer and the length of its family's structure.
    fileprivate mutating func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> Result) throws(SystemError) -> Result {
        let length = socklen_t(ss_family == sa_family_t(AF_INET) ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
        return try withUnsafePointer(to: &self) { storage throws(SystemError) in
            try storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer throws(SystemError) in try body(pointer, length) }
        }
    }
}
