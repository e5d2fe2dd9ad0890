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
/// *none* of the followed destinations of the message's family. Kept, in particular:
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
public struct NetlinkSocketFilter: Sendable, Equatable {
    /// The program, as the kernel takes it.
    public let instructions: [BPFInstruction]

    /// How many route attributes the program inspects looking for `RTA_DST` (the kernel puts it
    /// second, after `RTA_TABLE`, for both IPv4 and IPv6).
    public static let maximumAttributesScanned = 4

    /// The most destinations a program compares per family (IPv6 costs 17 instructions each,
    /// IPv4 5; at 128 of each the program is about 3,200 instructions of the kernel's 4,096).
    public static let maximumDestinationsPerFamily = 128

    /// The most neighbours a ``neighboursOf(_:)`` program follows per family.
    public static let maximumNeighboursPerFamily = 8

    /// The filter that keeps only route messages able to change the route to one of
    /// `destinations` (and every non-route message).
    ///
    /// - Parameter destinations: IPv4 and IPv6 addresses, at most ``maximumDestinationsPerFamily``
    ///   of each family.
    public static func routesContaining(_ destinations: [IPAddress]) -> NetlinkSocketFilter {
        let (ipv4Destinations, ipv6Destinations) = bytesByFamily(destinations)
        precondition(max(ipv4Destinations.count, ipv6Destinations.count) <= maximumDestinationsPerFamily, "too many destinations for one BPF program")
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
        for (family, destinations, addressLength) in [("ipv4", ipv4Destinations, 4), ("ipv6", ipv6Destinations, 16)] {
            program.label(family)
            program.findDestination(from: routeMessage, addressLength: addressLength, found: "\(family)-destination", keep: "\(family)-keep")
            program.label("\(family)-keep")
            program.statement(Op.ret | Op.k, UInt32.max)
            program.label("\(family)-destination")
            program.maskDestination(addressLength: addressLength, family: family)
            for (index, destination) in destinations.enumerated() {
                program.keepWhenPrefixContains(destination, otherwise: "\(family)-after\(index)")
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
    public static func neighboursOf(_ neighbours: [IPAddress]) -> NetlinkSocketFilter {
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
    public static let keepingEverything = NetlinkSocketFilter(instructions: [
        BPFInstruction(code: LinuxBPF.ret | LinuxBPF.k, jumpIfTrue: 0, jumpIfFalse: 0, constant: UInt32.max),
    ])

    /// Attaches the program to `socket`; from then on the kernel runs it on every datagram
    /// before queueing it. The corresponding C function is `setsockopt(SO_ATTACH_FILTER)`.
    public func attach(to socket: NetlinkSocket) throws(SystemError) {
        var filters = instructions.map { sock_filter(code: $0.code, jt: $0.jumpIfTrue, jf: $0.jumpIfFalse, k: $0.constant) }
        try filters.withUnsafeMutableBufferPointer { (buffer) throws(SystemError) in
            var program = sock_fprog(len: UInt16(buffer.count), filter: buffer.baseAddress)
            try valueOrErrno("attach the netlink socket filter") {
                setsockopt(socket.fileDescriptor, SOL_SOCKET, SO_ATTACH_FILTER, &program, socklen_t(MemoryLayout<sock_fprog>.size))
            }
        }
    }

    /// Scratch memory slots (`M[]`) used by the program.
    fileprivate enum Slot {
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

/// One classic-BPF instruction (`struct sock_filter`).
public struct BPFInstruction: Sendable, Equatable, CustomStringConvertible {
    /// The opcode (`BPF_LD | BPF_W | BPF_ABS`, …).
    public var code: UInt16
    /// Forward offset to the next instruction when a jump's condition holds.
    public var jumpIfTrue: UInt8
    /// Forward offset when it does not.
    public var jumpIfFalse: UInt8
    /// The constant operand.
    public var constant: UInt32

    public var description: String {
        "{ 0x\(String(code, radix: 16)), \(jumpIfTrue), \(jumpIfFalse), 0x\(String(constant, radix: 16)) }"
    }
}

/// The classic-BPF opcodes from `<linux/filter.h>`, short names for the assembler below.
enum LinuxBPF {
    static let ld = UInt16(BPF_LD), ldx = UInt16(BPF_LDX), st = UInt16(BPF_ST), alu = UInt16(BPF_ALU)
    static let jmp = UInt16(BPF_JMP), ret = UInt16(BPF_RET), misc = UInt16(BPF_MISC)
    static let w = UInt16(BPF_W), h = UInt16(BPF_H), b = UInt16(BPF_B)
    static let imm = UInt16(BPF_IMM), abs = UInt16(BPF_ABS), ind = UInt16(BPF_IND), mem = UInt16(BPF_MEM), len = UInt16(BPF_LEN)
    static let add = UInt16(BPF_ADD), or = UInt16(BPF_OR), and = UInt16(BPF_AND), lsh = UInt16(BPF_LSH), rsh = UInt16(BPF_RSH)
    static let neg = UInt16(BPF_NEG), xor = UInt16(BPF_XOR)
    static let ja = UInt16(BPF_JA), jeq = UInt16(BPF_JEQ), jgt = UInt16(BPF_JGT), jge = UInt16(BPF_JGE)
    static let k = UInt16(BPF_K), x = UInt16(BPF_X), tax = UInt16(BPF_TAX)
}

/// Builds a program with named forward jump targets, resolved by ``assemble()``.
struct BPFAssembler {
    /// Each instruction with its jump targets; `always` marks a `ja`, whose constant is the offset.
    private var code: [(code: UInt16, ifTrue: String?, ifFalse: String?, always: String?, constant: UInt32)] = []
    private var labels: [String: Int] = [:]
    private let littleEndian = UInt16(1).littleEndian == 1

    mutating func statement(_ opcode: UInt16, _ constant: UInt32 = 0) {
        code.append((opcode, nil, nil, nil, constant))
    }

    /// A conditional jump; a nil target is the next instruction.
    mutating func jump(_ opcode: UInt16, _ constant: UInt32, ifTrue: String?, ifFalse: String?) {
        code.append((opcode, ifTrue, ifFalse, nil, constant))
    }

    /// An unconditional jump (`ja`), whose 32-bit offset reaches past 255 instructions.
    mutating func always(_ target: String) {
        code.append((LinuxBPF.jmp | LinuxBPF.ja, nil, nil, target, 0))
    }

    mutating func label(_ name: String) {
        precondition(labels[name] == nil, "duplicate BPF label \(name)")
        labels[name] = code.count
    }

    /// The start of every program: zeroes the scratch slots (the kernel's checker wants each
    /// stored before any load on all paths, and its flow analysis lets what precedes a `ret` fall
    /// into the next instruction), stores the datagram's length in M[length], and jumps to `target`
    /// when the datagram is one message of one of `types`, else to `otherwise`.
    mutating func dispatchSingleMessage(ofTypes types: [UInt16], to target: String, otherwise: String) {
        typealias Op = LinuxBPF
        statement(Op.ld | Op.imm, 0)
        for slot in NetlinkSocketFilter.Slot.all { statement(Op.st, slot) }
        statement(Op.ld | Op.w | Op.len)
        statement(Op.st, NetlinkSocketFilter.Slot.length)
        loadHostInteger(byteCount: 4, at: 0, indexed: false)
        statement(Op.ldx | Op.mem, NetlinkSocketFilter.Slot.length)
        jump(Op.jmp | Op.jeq | Op.x, 0, ifTrue: nil, ifFalse: otherwise)
        loadHostInteger(byteCount: 2, at: 4, indexed: false)
        for (index, type) in types.enumerated() {
            jump(Op.jmp | Op.jeq | Op.k, UInt32(type), ifTrue: target, ifFalse: index == types.count - 1 ? otherwise : nil)
        }
    }

    /// A = the host-order unsigned integer of `byteCount` bytes at `offset` (plus X when
    /// `indexed`). Uses M[scratch] and M[scratch2]; clobbers X when indexed (callers reload it).
    mutating func loadHostInteger(byteCount: Int, at offset: Int, indexed: Bool) {
        typealias Op = LinuxBPF
        let mode = indexed ? Op.ind : Op.abs
        // Most significant byte first.
        let offsets = (0..<byteCount).map { littleEndian ? offset + byteCount - 1 - $0 : offset + $0 }
        statement(Op.ld | Op.b | mode, UInt32(offsets[0]))
        statement(Op.st, NetlinkSocketFilter.Slot.scratch)
        for byteOffset in offsets.dropFirst() {
            statement(Op.ld | Op.b | mode, UInt32(byteOffset))
            statement(Op.st, NetlinkSocketFilter.Slot.scratch2)
            statement(Op.ld | Op.mem, NetlinkSocketFilter.Slot.scratch)
            statement(Op.alu | Op.lsh | Op.k, 8)
            if indexed {
                // X holds the base offset: park the byte in X only after the last indexed load.
                statement(Op.st, NetlinkSocketFilter.Slot.scratch)
                continue
            }
            statement(Op.ldx | Op.mem, NetlinkSocketFilter.Slot.scratch2)
            statement(Op.alu | Op.or | Op.x)
            statement(Op.st, NetlinkSocketFilter.Slot.scratch)
        }
        if indexed {
            precondition(byteCount == 2, "indexed host loads are only needed for 16-bit fields")
            statement(Op.ldx | Op.mem, NetlinkSocketFilter.Slot.scratch2)
            statement(Op.ld | Op.mem, NetlinkSocketFilter.Slot.scratch)
            statement(Op.alu | Op.or | Op.x)
        } else {
            statement(Op.ld | Op.mem, NetlinkSocketFilter.Slot.scratch)
        }
    }

    /// The value a big-endian BPF halfword load gives for the host-order `value` in memory.
    func halfwordAsLoaded(_ value: UInt16) -> UInt32 {
        UInt32(littleEndian ? value.byteSwapped : value)
    }

    /// Scans the attributes after `struct rtmsg` for `RTA_DST`; jumps to `found` with
    /// M[attributeOffset] = its offset (and its payload known to lie inside the message),
    /// else to `keep`.
    mutating func findDestination(from start: Int, addressLength: Int, found: String, keep: String) {
        typealias Op = LinuxBPF
        typealias Slot = NetlinkSocketFilter.Slot
        let header = LinuxNetlink.attributeHeaderLength
        statement(Op.ld | Op.imm, UInt32(start))
        statement(Op.st, Slot.attributeOffset)
        for attempt in 0..<NetlinkSocketFilter.maximumAttributesScanned {
            let next = "\(found)-\(attempt)"
            // The attribute header must lie inside the message.
            statement(Op.ldx | Op.mem, Slot.length)
            statement(Op.ld | Op.mem, Slot.attributeOffset)
            statement(Op.alu | Op.add | Op.k, UInt32(header))
            jump(Op.jmp | Op.jgt | Op.x, 0, ifTrue: keep, ifFalse: nil)
            // Its type, without the nested / byte-order flags (compared as loaded: equality only).
            statement(Op.ldx | Op.mem, Slot.attributeOffset)
            statement(Op.ld | Op.h | Op.ind, 2)
            statement(Op.alu | Op.and | Op.k, halfwordAsLoaded(LinuxNetlink.attributeTypeMask))
            jump(Op.jmp | Op.jeq | Op.k, halfwordAsLoaded(LinuxNetlink.routeDestination), ifTrue: "\(next)-is-destination", ifFalse: nil)
            // Not RTA_DST: step over it (rta_len, aligned to 4; below the header size is malformed).
            statement(Op.ldx | Op.mem, Slot.attributeOffset)
            loadHostInteger(byteCount: 2, at: 0, indexed: true)
            jump(Op.jmp | Op.jge | Op.k, UInt32(header), ifTrue: nil, ifFalse: keep)
            statement(Op.alu | Op.add | Op.k, 3)
            statement(Op.alu | Op.and | Op.k, ~UInt32(3))
            statement(Op.ldx | Op.mem, Slot.attributeOffset)
            statement(Op.alu | Op.add | Op.x)
            statement(Op.st, Slot.attributeOffset)
            jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: next, ifFalse: next)  // an always-taken jump over the found branch
            label("\(next)-is-destination")
            // The address must lie inside the message.
            statement(Op.ldx | Op.mem, Slot.length)
            statement(Op.ld | Op.mem, Slot.attributeOffset)
            statement(Op.alu | Op.add | Op.k, UInt32(header + addressLength))
            jump(Op.jmp | Op.jgt | Op.x, 0, ifTrue: keep, ifFalse: found)
            label(next)
        }
        jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: keep, ifFalse: keep)
    }

    /// With M[attributeOffset] at `RTA_DST` and M[destinationLength] its prefix length (not 0):
    /// stores the prefix's mask for each word of the address in M[mask], and the masked
    /// destination in M[maskedDestination].
    mutating func maskDestination(addressLength: Int, family: String) {
        typealias Op = LinuxBPF
        typealias Slot = NetlinkSocketFilter.Slot
        for word in 0..<(addressLength / 4) {
            let bits = UInt32(32 * word)
            let name = "\(family)-mask\(word)"
            statement(Op.ld | Op.mem, Slot.destinationLength)
            jump(Op.jmp | Op.jgt | Op.k, bits, ifTrue: nil, ifFalse: "\(name)-none")
            jump(Op.jmp | Op.jge | Op.k, bits + 32, ifTrue: "\(name)-all", ifFalse: nil)
            // Only the top (length - bits) bits are prefix: ~0 << (bits + 32 - length), a shift of 1...31.
            statement(Op.alu | Op.neg)
            statement(Op.alu | Op.add | Op.k, bits + 32)
            statement(Op.misc | Op.tax)
            statement(Op.ld | Op.imm, UInt32.max)
            statement(Op.alu | Op.lsh | Op.x)
            jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: "\(name)-done", ifFalse: "\(name)-done")
            label("\(name)-all")
            statement(Op.ld | Op.imm, UInt32.max)
            jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: "\(name)-done", ifFalse: "\(name)-done")
            label("\(name)-none")
            statement(Op.ld | Op.imm, 0)
            label("\(name)-done")
            statement(Op.st, Slot.mask[word])
            statement(Op.ldx | Op.mem, Slot.attributeOffset)
            statement(Op.ld | Op.w | Op.ind, UInt32(LinuxNetlink.attributeHeaderLength + 4 * word))
            statement(Op.ldx | Op.mem, Slot.mask[word])
            statement(Op.alu | Op.and | Op.x)
            statement(Op.st, Slot.maskedDestination[word])
        }
    }

    /// After ``maskDestination(addressLength:family:)``: keeps the message when the prefix
    /// contains `address`, else goes on at `otherwise`. 4 instructions per word and a `ret`.
    mutating func keepWhenPrefixContains(_ address: [UInt8], otherwise: String) {
        typealias Op = LinuxBPF
        typealias Slot = NetlinkSocketFilter.Slot
        for word in 0..<(address.count / 4) {
            let addressWord = address[(4 * word)..<(4 * word + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            statement(Op.ldx | Op.mem, Slot.maskedDestination[word])
            statement(Op.ld | Op.mem, Slot.mask[word])
            statement(Op.alu | Op.and | Op.k, addressWord)
            jump(Op.jmp | Op.jeq | Op.x, 0, ifTrue: nil, ifFalse: otherwise)
        }
        statement(Op.ret | Op.k, UInt32.max)
    }

    /// Keeps the message when the bytes at `offset` equal `address` (network order, as word loads
    /// give it), else goes on at `otherwise`. 2 instructions per word and a `ret`.
    mutating func keepWhenEqual(_ address: [UInt8], at offset: UInt32, otherwise: String) {
        typealias Op = LinuxBPF
        for word in 0..<(address.count / 4) {
            let addressWord = address[(4 * word)..<(4 * word + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            statement(Op.ld | Op.w | Op.abs, offset + UInt32(4 * word))
            jump(Op.jmp | Op.jeq | Op.k, addressWord, ifTrue: nil, ifFalse: otherwise)
        }
        statement(Op.ret | Op.k, UInt32.max)
    }

    /// Resolves the labels into forward offsets.
    func assemble() -> [BPFInstruction] {
        func distance(from index: Int, to label: String) -> Int {
            guard let target = labels[label] else { preconditionFailure("undefined BPF label \(label)") }
            let distance = target - index - 1
            precondition(distance >= 0, "BPF jump to \(label) goes backwards")
            return distance
        }
        func offset(from index: Int, to label: String?) -> UInt8 {
            guard let label else { return 0 }
            let offset = distance(from: index, to: label)
            precondition(offset <= Int(UInt8.max), "BPF conditional jump to \(label) out of range (\(offset)); use always(_:)")
            return UInt8(offset)
        }
        precondition(code.count <= Int(BPF_MAXINSNS), "BPF program too long")
        return code.enumerated().map { index, instruction in
            BPFInstruction(
                code: instruction.code,
                jumpIfTrue: offset(from: index, to: instruction.ifTrue),
                jumpIfFalse: offset(from: index, to: instruction.ifFalse),
                constant: instruction.always.map { UInt32(distance(from: index, to: $0)) } ?? instruction.constant
            )
        }
    }
}
