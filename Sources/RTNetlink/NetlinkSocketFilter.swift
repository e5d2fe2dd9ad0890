#if canImport(Glibc)
import Glibc
#endif
import CReachabilityShims
import SystemSupport

/// A classic-BPF socket filter (`SO_ATTACH_FILTER`) for the rtnetlink monitor socket: the kernel
/// drops route notifications that cannot change the route to the probe destinations before
/// they are queued, so a route table churning with irrelevant routes costs the daemon nothing.
///
/// ## What it keeps
/// Everything except `RTM_NEWROUTE`/`RTM_DELROUTE` messages whose destination prefix does *not*
/// contain the probe destination of the message's family. Kept, in particular:
/// - every link, address, rule and other message;
/// - default routes (`rtm_dst_len` 0), in any table;
/// - routes whose prefix contains the probe, whatever its length: `0.0.0.0/1` (the half-default
///   pair VPN clients install), `8.0.0.0/7`, or even `8.8.8.8/32` — each changes the kernel's
///   answer for the probe, so each must trigger a new lookup;
/// - anything the program cannot decide safely (fail open): a datagram holding more than one
///   message, a family other than IPv4/IPv6, a route message too short to hold `struct rtmsg`,
///   an `RTA_DST` not among the first ``maximumAttributesScanned`` attributes or running past
///   the end of the message.
///
/// Dropped: routes whose prefix excludes the probe, e.g. `10.1.2.0/24`, `128.0.0.0/1` or
/// `ff00::/8`. Such a route can never be the kernel's longest match for the probe, in any table,
/// so the lookups the daemon makes would return the same answer (the per-address `CheckAddress`
/// answers are fresh kernel lookups at call time and do not depend on events at all).
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

    /// The filter that keeps only route messages able to change the route to `ipv4Probe` or
    /// `ipv6Probe`.
    ///
    /// - Parameters:
    ///   - ipv4Probe: the 4 bytes of the IPv4 probe destination.
    ///   - ipv6Probe: the 16 bytes of the IPv6 probe destination.
    public static func routesToProbes(ipv4Probe: [UInt8], ipv6Probe: [UInt8]) -> NetlinkSocketFilter {
        precondition(ipv4Probe.count == 4 && ipv6Probe.count == 16, "probe destinations must be 4 and 16 bytes")
        var program = BPFAssembler()
        let header = LinuxNetlink.headerLength
        let routeMessage = header + LinuxNetlink.routeInfoLength
        typealias Op = LinuxBPF

        // The kernel's checker wants every scratch slot stored before any load on all paths, and
        // its flow analysis lets what precedes a `ret` fall into the next instruction: zero them all.
        program.statement(Op.ld | Op.imm, 0)
        for slot in Slot.all { program.statement(Op.st, slot) }

        // M[length] = the datagram's length; keep when it holds more than one message.
        program.statement(Op.ld | Op.w | Op.len)
        program.statement(Op.st, Slot.length)
        program.loadHostInteger(byteCount: 4, at: 0, indexed: false)
        program.statement(Op.ldx | Op.mem, Slot.length)
        program.jump(Op.jmp | Op.jeq | Op.x, 0, ifTrue: nil, ifFalse: "keep")

        // Only route messages are candidates for dropping.
        program.loadHostInteger(byteCount: 2, at: 4, indexed: false)
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(LinuxNetlink.newRoute), ifTrue: "route", ifFalse: nil)
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(LinuxNetlink.deleteRoute), ifTrue: "route", ifFalse: "keep")

        program.label("route")
        program.statement(Op.ld | Op.mem, Slot.length)
        program.jump(Op.jmp | Op.jge | Op.k, UInt32(routeMessage), ifTrue: nil, ifFalse: "keep")
        program.statement(Op.ld | Op.b | Op.abs, UInt32(header + RouteMessageOffset.destinationLength))
        program.jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: "keep", ifFalse: nil)
        program.statement(Op.st, Slot.destinationLength)
        program.statement(Op.ld | Op.b | Op.abs, UInt32(header + RouteMessageOffset.family))
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(AF_INET), ifTrue: "ipv4", ifFalse: nil)
        program.jump(Op.jmp | Op.jeq | Op.k, UInt32(AF_INET6), ifTrue: "ipv6", ifFalse: "keep")
        program.label("keep")
        program.statement(Op.ret | Op.k, UInt32.max)

        // Each family's section ends with its own returns: cBPF jumps reach 255 instructions at most.
        for (family, probe) in [("ipv4", ipv4Probe), ("ipv6", ipv6Probe)] {
            program.label(family)
            program.findDestination(from: routeMessage, addressLength: probe.count, found: "\(family)-destination", keep: "\(family)-keep")
            program.label("\(family)-destination")
            program.compareWithProbe(probe, family: family, keep: "\(family)-keep", drop: "\(family)-drop")
            program.label("\(family)-keep")
            program.statement(Op.ret | Op.k, UInt32.max)
            program.label("\(family)-drop")
            program.statement(Op.ret | Op.k, 0)
        }
        return NetlinkSocketFilter(instructions: program.assemble())
    }

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
        static let difference: UInt32 = 3
        static let scratch: UInt32 = 4
        static let scratch2: UInt32 = 5
        static let all = [length, attributeOffset, destinationLength, difference, scratch, scratch2]
    }

    /// Offsets inside `struct rtmsg`.
    fileprivate enum RouteMessageOffset {
        static let family = 0
        static let destinationLength = 1
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
    static let jeq = UInt16(BPF_JEQ), jgt = UInt16(BPF_JGT), jge = UInt16(BPF_JGE)
    static let k = UInt16(BPF_K), x = UInt16(BPF_X), tax = UInt16(BPF_TAX)
}

/// Builds a program with named forward jump targets, resolved by ``assemble()``.
struct BPFAssembler {
    private var code: [(code: UInt16, ifTrue: String?, ifFalse: String?, constant: UInt32)] = []
    private var labels: [String: Int] = [:]
    private let littleEndian = UInt16(1).littleEndian == 1

    mutating func statement(_ opcode: UInt16, _ constant: UInt32 = 0) {
        code.append((opcode, nil, nil, constant))
    }

    /// A conditional jump; a nil target is the next instruction.
    mutating func jump(_ opcode: UInt16, _ constant: UInt32, ifTrue: String?, ifFalse: String?) {
        code.append((opcode, ifTrue, ifFalse, constant))
    }

    mutating func label(_ name: String) {
        precondition(labels[name] == nil, "duplicate BPF label \(name)")
        labels[name] = code.count
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

    /// With M[attributeOffset] at `RTA_DST` and M[destinationLength] its prefix length: keeps
    /// the message when the prefix contains `probe`, drops it otherwise.
    mutating func compareWithProbe(_ probe: [UInt8], family: String, keep: String, drop: String) {
        typealias Op = LinuxBPF
        typealias Slot = NetlinkSocketFilter.Slot
        let header = LinuxNetlink.attributeHeaderLength
        for word in 0..<(probe.count / 4) {
            let bits = UInt32(32 * word)
            let probeWord = probe[(4 * word)..<(4 * word + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let partial = "\(family)-word\(word)-partial"
            // All prefix bits were in earlier words, which matched: the prefix contains the probe.
            statement(Op.ld | Op.mem, Slot.destinationLength)
            jump(Op.jmp | Op.jgt | Op.k, bits, ifTrue: nil, ifFalse: keep)
            // M[difference] = this word of the destination XOR the probe's.
            statement(Op.ldx | Op.mem, Slot.attributeOffset)
            statement(Op.ld | Op.w | Op.ind, UInt32(header + 4 * word))
            statement(Op.alu | Op.xor | Op.k, probeWord)
            statement(Op.st, Slot.difference)
            statement(Op.ld | Op.mem, Slot.destinationLength)
            jump(Op.jmp | Op.jge | Op.k, bits + 32, ifTrue: nil, ifFalse: partial)
            // The whole word is prefix: it must match, then the next word decides.
            statement(Op.ld | Op.mem, Slot.difference)
            jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: nil, ifFalse: drop)
            jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: "\(family)-word\(word)-done", ifFalse: "\(family)-word\(word)-done")
            // Only the top (length - bits) bits are prefix: shift the rest out.
            label(partial)
            statement(Op.alu | Op.neg)
            statement(Op.alu | Op.add | Op.k, bits + 32)
            statement(Op.misc | Op.tax)
            statement(Op.ld | Op.mem, Slot.difference)
            statement(Op.alu | Op.rsh | Op.x)
            jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: keep, ifFalse: drop)
            label("\(family)-word\(word)-done")
        }
        // Every word matched in full (a host route to the probe itself).
        jump(Op.jmp | Op.jeq | Op.k, 0, ifTrue: keep, ifFalse: keep)
    }

    /// Resolves the labels into forward offsets.
    func assemble() -> [BPFInstruction] {
        func offset(from index: Int, to label: String?) -> UInt8 {
            guard let label else { return 0 }
            guard let target = labels[label] else { preconditionFailure("undefined BPF label \(label)") }
            let distance = target - index - 1
            precondition(distance >= 0 && distance <= Int(UInt8.max), "BPF jump to \(label) out of range (\(distance))")
            return UInt8(distance)
        }
        precondition(code.count <= Int(BPF_MAXINSNS), "BPF program too long")
        return code.enumerated().map { index, instruction in
            BPFInstruction(
                code: instruction.code,
                jumpIfTrue: offset(from: index, to: instruction.ifTrue),
                jumpIfFalse: offset(from: index, to: instruction.ifFalse),
                constant: instruction.constant
            )
        }
    }
}
