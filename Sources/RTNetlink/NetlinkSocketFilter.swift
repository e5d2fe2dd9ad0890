#if canImport(Glibc)
import Glibc
#endif
import CNetlinkShims
import NetworkTypes
import SystemSupport

/// A classic-BPF socket filter (`SO_ATTACH_FILTER`) for the rtnetlink monitor socket: the kernel
/// drops route notifications that cannot change the route to the destinations the daemon follows
/// (the probes, and the addresses clients recently asked about) before they are queued, so a
/// route table churning with irrelevant routes costs the daemon nothing.
///
/// ## What it keeps
/// Everything except `RTM_NEWROUTE`/`RTM_DELROUTE` messages whose destination prefix contains
/// *none* of the followed destinations of the message's family (with ``routesOverlapping(_:)``,
/// overlaps none of the followed prefixes). Kept, in particular:
/// - every link, address, rule and other message;
/// - default routes (`rtm_dst_len` 0), in any table;
/// - routes whose prefix contains a followed destination, whatever its length: for the probe
///   8.8.8.8, `0.0.0.0/1` (the half-default pair VPN clients install), `8.0.0.0/7`, or even
///   `8.8.8.8/32` — each changes the kernel's answer for that destination, so each must trigger
///   a new lookup;
/// - anything the program cannot decide safely (fail open): a datagram holding more than one
///   message, a family other than IPv4/IPv6, a route message too short to hold `struct rtmsg`,
///   an `RTA_DST` not among the first ``maximumAttributesScanned`` attributes or running past
///   the end of the message.
///
/// Dropped: routes whose prefix excludes every followed destination, e.g. `10.1.2.0/24`,
/// `128.0.0.0/1` or `ff00::/8` when only the probes are followed. Such a route can never be the
/// kernel's longest match for them, in any table, so the lookups the daemon makes would return
/// the same answers.
///
/// ## How a prefix is compared
/// Once per message the program turns the prefix length into one mask per 32-bit word of the
/// address and stores the masked destination beside it (`M[]`); each followed address then costs
/// 4 instructions per word (`(address & mask) == masked destination`) and a `ret`, all with short
/// conditional jumps. Unconditional `ja` (32-bit offset) reaches the IPv6 section past the IPv4
/// one. At ``maximumDestinationsPerFamily`` per family the program stays under `BPF_MAXINSNS`.
///
/// ## Why one message per filter run is enough
/// A BPF socket filter sees one `sk_buff`. The kernel builds one `sk_buff` per multicast
/// notification (`rtnl_notify` of a single message), so the program sees exactly one message.
/// It checks this (`nlmsg_len` equals the buffer length) and keeps the datagram otherwise.
/// The benchmark's floor reader reports the largest number of messages per datagram it saw (1).
///
/// Netlink headers are in host byte order while BPF loads halfwords and words big-endian, so
/// the program reads multi-byte header fields byte by byte in host order. Addresses in `RTA_DST`
/// are in network order, which is what BPF word loads give.
package struct NetlinkSocketFilter: Sendable, Equatable {
    /// The program, as the kernel takes it.
    package let instructions: [BPFInstruction]

    /// How many route attributes the program inspects looking for `RTA_DST` (the kernel puts it
    /// second, after `RTA_TABLE`, for both IPv4 and IPv6).
    package static let maximumAttributesScanned = 4

    /// The most destinations a program compares per family (IPv6 costs 17 instructions each,
    /// IPv4 5; at 128 of each the program is about 3,200 instructions of the kernel's 4,096).
    package static let maximumDestinationsPerFamily = 128

    /// The most neighbours a ``neighboursOf(_:)`` program follows per family.
    package static let maximumNeighboursPerFamily = 8

    /// The filter that keeps only route messages able to change the route to one of
    /// `destinations` (and every non-route message).
    ///
    /// - Parameter destinations: IPv4 and IPv6 addresses, at most ``maximumDestinationsPerFamily``
    ///   of each family.
    package static func routesContaining(_ destinations: [IPAddress]) -> NetlinkSocketFilter {
        routesOverlapping(destinations.map(IPPrefix.init(host:)))
    }

    /// The filter that keeps only route messages able to change the route to an address in one
    /// of `prefixes` (and every non-route message): routes whose prefix overlaps one of them,
    /// i.e. contains it or lies inside it. For a host prefix that is a route containing the
    /// address; a shorter one stands for every address it contains, so one filter can follow
    /// more destinations than it lists, keeping some routes that change none of them.
    ///
    /// - Parameter prefixes: IPv4 and IPv6 prefixes, at most ``maximumDestinationsPerFamily`` of
    ///   each family; a shorter prefix costs 4 instructions more than a host (3 per word it spans).
    package static func routesOverlapping(_ prefixes: [IPPrefix]) -> NetlinkSocketFilter {
        let ipv4Prefixes = prefixes.filter { $0.network.family == .ipv4 }
        let ipv6Prefixes = prefixes.filter { $0.network.family == .ipv6 }
        precondition(max(ipv4Prefixes.count, ipv6Prefixes.count) <= maximumDestinationsPerFamily, "too many destinations for one BPF program")
        var program = BPFAssembler()
        let header = LinuxNetlink.headerLength
        let routeMessage = header + LinuxNetlink.routeInfoLength
        typealias Op = LinuxBPF

        // Only route messages are candidates for dropping.
        program.dispatchSingleMessage(ofTypes: [LinuxNetlink.newRoute, LinuxNetlink.deleteRoute], to: "route", otherwise: "keep")

        program.label("route")
        program.statement(Op.ld | Op.mem, Slot.length)
        program.jump(Op.jmp | Op.jge | Op.k, UInt32(routeMessage), ifTrue: nil, ifFalse: "keep")
        program.statement(Op.ld | Op.b | Op.abs, UInt32(header + RouteMessageOffset.destinationLength))
        program.jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: "keep", ifFalse: nil)
        program.statement(Op.st, Slot.destinationLength)
        program.statement(Op.ld | Op.b | Op.abs, UInt32(header + RouteMessageOffset.family))
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(AF_INET), ifTrue: nil, ifFalse: "not-ipv4")
        program.always("ipv4")
        program.label("not-ipv4")
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(AF_INET6), ifTrue: nil, ifFalse: "keep")
        program.always("ipv6")

        program.label("keep")
        program.statement(Op.ret | Op.k, UInt32.max)

        // Each family's section ends with its own returns: conditional jumps reach 255 instructions at most.
        for (family, familyPrefixes, addressLength) in [("ipv4", ipv4Prefixes, 4), ("ipv6", ipv6Prefixes, 16)] {
            program.label(family)
            program.findDestination(from: routeMessage, addressLength: addressLength, found: "\(family)-destination", keep: "\(family)-keep")
            program.label("\(family)-keep")
            program.statement(Op.ret | Op.k, UInt32.max)
            program.label("\(family)-destination")
            program.maskDestination(addressLength: addressLength, family: family)
            for (index, prefix) in familyPrefixes.enumerated() {
                program.keepWhenPrefixOverlaps(prefix.network.bytes, length: prefix.length, otherwise: "\(family)-after\(index)")
                program.label("\(family)-after\(index)")
            }
            program.statement(Op.ret | Op.k, 0)
        }
        return NetlinkSocketFilter(instructions: program.assemble())
    }

    /// The filter of the neighbour socket: keeps `RTM_NEWNEIGH`/`RTM_DELNEIGH` messages whose
    /// `NDA_DST` (the kernel's first attribute) equals one of `neighbours`, the gateways the
    /// daemon follows; drops every other neighbour (a busy
    /// LAN's ARP and NDP churn) and other families' entries (bridge forwarding entries); keeps
    /// what it cannot decide (another layout, a datagram of several messages, other types).
    ///
    /// A socket of its own: the route filter's size is what `net.core.optmem_max` leaves room
    /// for (twice, while one program replaces another), all of it for watched destinations.
    ///
    /// - Parameter neighbours: IPv4 and IPv6 addresses, at most ``maximumNeighboursPerFamily`` of
    ///   each family.
    package static func neighboursOf(_ neighbours: [IPAddress]) -> NetlinkSocketFilter {
        let (ipv4Neighbours, ipv6Neighbours) = bytesByFamily(neighbours)
        precondition(max(ipv4Neighbours.count, ipv6Neighbours.count) <= maximumNeighboursPerFamily, "too many neighbours for one BPF program")
        var program = BPFAssembler()
        let header = LinuxNetlink.headerLength
        let neighbourMessage = header + LinuxNetlink.neighbourInfoLength
        let address = UInt32(neighbourMessage + LinuxNetlink.attributeHeaderLength)
        typealias Op = LinuxBPF

        // One message per datagram, of a neighbour type, long enough for ndmsg; else keep.
        program.dispatchSingleMessage(ofTypes: [LinuxNetlink.newNeighbour, LinuxNetlink.deleteNeighbour], to: "neighbour", otherwise: "keep")
        program.label("neighbour")
        program.statement(Op.ld | Op.mem, Slot.length)
        program.jump(Op.jmp | Op.jge | Op.k, UInt32(neighbourMessage), ifTrue: nil, ifFalse: "keep")
        program.statement(Op.ld | Op.b | Op.abs, UInt32(header))
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(AF_INET), ifTrue: "ipv4", ifFalse: nil)
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(AF_INET6), ifTrue: "ipv6", ifFalse: nil)
        program.statement(Op.ret | Op.k, 0)
        program.label("keep")
        program.statement(Op.ret | Op.k, UInt32.max)

        // NDA_DST first, of the family's length: its address must equal a followed neighbour's.
        for (family, neighbours, addressLength) in [("ipv4", ipv4Neighbours, 4), ("ipv6", ipv6Neighbours, 16)] {
            program.label(family)
            program.statement(Op.ld | Op.mem, Slot.length)
            program.jump(Op.jmp | Op.jge | Op.k, address + UInt32(addressLength), ifTrue: nil, ifFalse: "\(family)-keep")
            program.statement(Op.ld | Op.h | Op.abs, UInt32(neighbourMessage))
            let attributeLength = UInt16(LinuxNetlink.attributeHeaderLength + addressLength)
            program.jump(Op.jmp | Op.jeq | Op.k, program.halfwordAsLoaded(attributeLength), ifTrue: nil, ifFalse: "\(family)-keep")
            program.statement(Op.ld | Op.h | Op.abs, UInt32(neighbourMessage + 2))
            program.statement(Op.alu | Op.and | Op.k, program.halfwordAsLoaded(LinuxNetlink.attributeTypeMask))
            program.jump(Op.jmp | Op.jeq | Op.k, program.halfwordAsLoaded(LinuxNetlink.neighbourDestination), ifTrue: nil, ifFalse: "\(family)-keep")
            for (index, neighbour) in neighbours.enumerated() {
                program.keepWhenEqual(neighbour, at: address, otherwise: "\(family)-after\(index)")
                program.label("\(family)-after\(index)")
            }
            program.statement(Op.ret | Op.k, 0)
            program.label("\(family)-keep")
            program.statement(Op.ret | Op.k, UInt32.max)
        }
        return NetlinkSocketFilter(instructions: program.assemble())
    }

    /// A program that keeps everything: in place for the moment a replacement waits (a
    /// destination just watched must not miss a route change meanwhile).
    package static let keepingEverything = NetlinkSocketFilter(instructions: [
        BPFInstruction(code: LinuxBPF.ret | LinuxBPF.k, jumpIfTrue: 0, jumpIfFalse: 0, constant: UInt32.max),
    ])

    /// Attaches the program to `socket`; from then on the kernel runs it on every datagram
    /// before queueing it. The corresponding C function is `setsockopt(SO_ATTACH_FILTER)`.
    package func attach(to socket: NetlinkSocket) throws(SystemError) {
        var filters = instructions.map { sock_filter(code: $0.code, jt: $0.jumpIfTrue, jf: $0.jumpIfFalse, k: $0.constant) }
        try filters.withUnsafeMutableBufferPointer { (buffer) throws(SystemError) in
            var program = sock_fprog(len: UInt16(buffer.count), filter: buffer.baseAddress)
            try valueOrErrno("attach the netlink socket filter") {
                setsockopt(socket.fileDescriptor, SOL_SOCKET, SO_ATTACH_FILTER, &program, socklen_t(MemoryLayout<sock_fprog>.size))
            }
        }
    }

    /// Scratch memory slots (`M[]`) used by the program.
    enum Slot {
        static let length: UInt32 = 0
        static let attributeOffset: UInt32 = 1
        static let destinationLength: UInt32 = 2
        static let scratch: UInt32 = 3
        static let scratch2: UInt32 = 4
        /// The prefix's mask for each 32-bit word of the address (0 past the prefix).
        static let mask: [UInt32] = [5, 6, 7, 8]
        /// Each word of `RTA_DST` with its mask applied.
        static let maskedDestination: [UInt32] = [9, 10, 11, 12]
        static let all = [length, attributeOffset, destinationLength, scratch, scratch2] + mask + maskedDestination
    }

    /// Offsets inside `struct rtmsg`.
    fileprivate enum RouteMessageOffset {
        static let family = 0
        static let destinationLength = 1
    }

    /// The addresses' bytes, IPv4's then IPv6's: what the programs compare.
    private static func bytesByFamily(_ addresses: [IPAddress]) -> (ipv4: [[UInt8]], ipv6: [[UInt8]]) {
        (addresses.filter { $0.family == .ipv4 }.map(\.bytes), addresses.filter { $0.family == .ipv6 }.map(\.bytes))
    }
}
