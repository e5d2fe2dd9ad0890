#if canImport(Glibc)
import Glibc
#endif
import CNetlinkShims
import SystemSupport

/// An `AF_NETLINK` / `NETLINK_ROUTE` socket: a file descriptor with an explicit lifetime.
/// The owner calls ``close()`` exactly once, after any Dispatch source on it was cancelled.
package struct NetlinkSocket: Sendable {
    /// The descriptor.
    package let fileDescriptor: Int32

    /// The rtnetlink multicast groups that can change reachability.
    package enum Group: Sendable, CaseIterable {
        /// Links (`RTNLGRP_LINK`).
        case link
        /// IPv4 addresses.
        case ipv4Address
        /// IPv6 addresses.
        case ipv6Address
        /// IPv4 routes.
        case ipv4Route
        /// IPv6 routes.
        case ipv6Route
        /// IPv4 policy rules.
        case ipv4Rule
        /// IPv6 policy rules.
        case ipv6Rule
        /// Nexthop objects (`RTNLGRP_NEXTHOP`).
        case nexthop
        /// Neighbour (ARP / NDP) entries (`RTNLGRP_NEIGH`); the monitor's filter keeps only the
        /// chosen routes' gateways.
        case neighbour
        /// Router advertisement options the kernel passes on (`RTNLGRP_ND_USEROPT`).
        case routerOption

        var number: UInt32 {
            switch self {
            case .link: LinuxNetlink.linkGroup
            case .ipv4Address: LinuxNetlink.ipv4AddressGroup
            case .ipv6Address: LinuxNetlink.ipv6AddressGroup
            case .ipv4Route: LinuxNetlink.ipv4RouteGroup
            case .ipv6Route: LinuxNetlink.ipv6RouteGroup
            case .ipv4Rule: LinuxNetlink.ipv4RuleGroup
            case .ipv6Rule: LinuxNetlink.ipv6RuleGroup
            case .nexthop: LinuxNetlink.nexthopGroup
            case .neighbour: LinuxNetlink.neighbourGroup
            case .routerOption: LinuxNetlink.routerOptionGroup
            }
        }
    }

    /// Opens, binds and connects (to the kernel) a non-blocking, close-on-exec rtnetlink socket.
    /// The corresponding C functions are `socket`, `bind` and `connect`.
    package static func open() throws(SystemError) -> NetlinkSocket {
        let descriptor = try valueOrErrno("open netlink socket") {
            socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), NETLINK_ROUTE)
        }
        let opened = NetlinkSocket(fileDescriptor: descriptor)
        do throws(SystemError) {
            // Port 0 in bind lets the kernel pick this socket's port id.
            try valueOrErrno("bind netlink socket") {
                withKernelAddress { bind(descriptor, $0, $1) }
            }
            // Connected to the kernel (port 0), the socket refuses unicast from user processes
            // (their sendto fails with ECONNREFUSED), so forged datagrams cannot fill its queue
            // and push out the kernel's replies. Multicast events still arrive.
            try valueOrErrno("connect netlink socket to the kernel") {
                withKernelAddress { connect(descriptor, $0, $1) }
            }
        } catch {
            opened.close()
            throw error
        }
        return opened
    }

    /// Joins multicast `groups` (`NETLINK_ADD_MEMBERSHIP`).
    package func subscribe(to groups: [Group]) throws(SystemError) {
        for group in groups {
            try setOption(level: SOL_NETLINK, name: NETLINK_ADD_MEMBERSHIP, value: Int32(group.number), action: "subscribe to rtnetlink group \(group)")
        }
    }

    /// Sets the receive buffer to `bytes`: `SO_RCVBUFFORCE` when permitted (CAP_NET_ADMIN), else
    /// `SO_RCVBUF` (capped by `net.core.rmem_max`).
    ///
    /// - Returns: the effective size the kernel reports (it doubles the request for bookkeeping).
    @discardableResult
    package func setReceiveBuffer(bytes: Int32) throws(SystemError) -> Int32 {
        do {
            try setOption(level: SOL_SOCKET, name: SO_RCVBUFFORCE, value: bytes, action: "force netlink receive buffer")
        } catch where error.errno == EPERM {
            try setOption(level: SOL_SOCKET, name: SO_RCVBUF, value: bytes, action: "set netlink receive buffer")
        }
        var effective: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        try valueOrErrno("read netlink receive buffer size") { getsockopt(fileDescriptor, SOL_SOCKET, SO_RCVBUF, &effective, &length) }
        return effective
    }

    /// Makes receives block for at most `seconds` instead of failing with `EAGAIN` at once.
    package func setBlocking(timeoutSeconds seconds: Int) throws(SystemError) {
        let flags = try valueOrErrno("read netlink socket flags") { fcntl(fileDescriptor, F_GETFL) }
        try valueOrErrno("make netlink socket blocking") { fcntl(fileDescriptor, F_SETFL, flags & ~O_NONBLOCK) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        try valueOrErrno("set netlink receive timeout") {
            setsockopt(fileDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// Sends one request to the kernel.
    /// The corresponding C function is `sendto`.
    package func send(_ message: [UInt8]) throws(SystemError) {
        try valueOrErrno("send netlink request") {
            message.withUnsafeBytes { bytes in
                Self.withKernelAddress { sendto(fileDescriptor, bytes.baseAddress, bytes.count, 0, $0, $1) }
            }
        }
    }

    /// Calls `body` with the kernel's netlink address (`AF_NETLINK`, port 0, no groups).
    private static func withKernelAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var kernel = sockaddr_nl()
        kernel.nl_family = sa_family_t(AF_NETLINK)
        return withUnsafePointer(to: &kernel) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_nl>.size)) }
        }
    }

    /// What one receive produced.
    package enum Received: Sendable, Equatable {
        /// A datagram of `count` bytes from the kernel is in the buffer.
        case datagram(count: Int)
        /// A datagram from a user-space process was read and must be ignored.
        case foreign(portID: UInt32)
        /// The kernel dropped messages because the receive buffer was full (`ENOBUFS`), or a
        /// datagram did not fit the buffer: the caller must resynchronise.
        case overrun
        /// Nothing is queued (`EAGAIN`).
        case empty
    }

    /// Receives one datagram into `buffer`, reporting who sent it.
    /// The corresponding C function is `recvmsg`.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Received {
        var sender = sockaddr_nl()
        var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        let count: Int
        var flags: Int32 = 0
        do {
            count = try withUnsafeMutablePointer(to: &sender) { (senderPointer) throws(SystemError) -> Int in
                try withUnsafeMutablePointer(to: &vector) { (vectorPointer) throws(SystemError) -> Int in
                    var header = msghdr()
                    header.msg_name = UnsafeMutableRawPointer(senderPointer)
                    header.msg_namelen = socklen_t(MemoryLayout<sockaddr_nl>.size)
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    let received = try valueOrErrno("receive from netlink socket") { recvmsg(fileDescriptor, &header, 0) }
                    flags = header.msg_flags
                    return received
                }
            }
        } catch where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return .empty
        } catch where error.errno == ENOBUFS {
            return .overrun
        }
        if flags & Int32(MSG_TRUNC) != 0 { return .overrun }
        if sender.nl_pid != 0 { return .foreign(portID: sender.nl_pid) }
        return .datagram(count: count)
    }

    /// Closes the descriptor.
    package func close() {
        _ = Glibc.close(fileDescriptor)
    }

    private func setOption(level: Int32, name: Int32, value: Int32, action: @autoclosure () -> String) throws(SystemError) {
        var value = value
        try valueOrErrno(action()) { setsockopt(fileDescriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }
}
