#if canImport(Glibc)
import Glibc
#endif
import CNetlinkShims

/// One classic-BPF instruction (`struct sock_filter`).
package struct BPFInstruction: Sendable, Equatable, CustomStringConvertible {
    /// The opcode (`BPF_LD | BPF_W | BPF_ABS`, …).
    package var code: UInt16
    /// Forward offset to the next instruction when a jump's condition holds.
    package var jumpIfTrue: UInt8
    /// Forward offset when it does not.
    package var jumpIfFalse: UInt8
    /// The constant operand.
    package var constant: UInt32

    package var description: String {
        "{ 0x\(String(code, radix: 16)), \(jumpIfTrue), \(jumpIfFalse), 0x\(String(constant, radix: 16)) }"
    }
}

/// The classic-BPF opcodes from `<linux/filter.h>`, short names for the assembler below (the
/// daemon's check helper builds its seccomp filter with them too).
package enum LinuxBPF {
    package static let ld = UInt16(BPF_LD), ldx = UInt16(BPF_LDX), st = UInt16(BPF_ST), alu = UInt16(BPF_ALU)
    package static let jmp = UInt16(BPF_JMP), ret = UInt16(BPF_RET), misc = UInt16(BPF_MISC)
    package static let w = UInt16(BPF_W), h = UInt16(BPF_H), b = UInt16(BPF_B)
    package static let imm = UInt16(BPF_IMM), abs = UInt16(BPF_ABS), ind = UInt16(BPF_IND), mem = UInt16(BPF_MEM), len = UInt16(BPF_LEN)
    package static let add = UInt16(BPF_ADD), or = UInt16(BPF_OR), and = UInt16(BPF_AND), lsh = UInt16(BPF_LSH), rsh = UInt16(BPF_RSH)
    package static let neg = UInt16(BPF_NEG), xor = UInt16(BPF_XOR)
    package static let ja = UInt16(BPF_JA), jeq = UInt16(BPF_JEQ), jgt = UInt16(BPF_JGT), jge = UInt16(BPF_JGE)
    package static let k = UInt16(BPF_K), x = UInt16(BPF_X), tax = UInt16(BPF_TAX)
}

/// Builds a program with named forward jump targets, resolved by ``assemble()``.
package struct BPFAssembler {
    /// Each instruction with its jump targets; `always` marks a `ja`, whose constant is the offset.
    private var code: [(code: UInt16, ifTrue: String?, ifFalse: String?, always: String?, constant: UInt32)] = []
    private var labels: [String: Int] = [:]
    private let littleEndian = UInt16(1).littleEndian == 1

    /// An empty program.
    package init() {}

    /// An instruction without jump targets.
    package mutating func statement(_ opcode: UInt16, _ constant: UInt32 = 0) {
        code.append((opcode, nil, nil, nil, constant))
    }

    /// A conditional jump; a nil target is the next instruction.
    package mutating func jump(_ opcode: UInt16, _ constant: UInt32, ifTrue: String?, ifFalse: String?) {
        code.append((opcode, ifTrue, ifFalse, nil, constant))
    }

    /// An unconditional jump (`ja`), whose 32-bit offset reaches past 255 instructions.
    package mutating func always(_ target: String) {
        code.append((LinuxBPF.jmp | LinuxBPF.ja, nil, nil, target, 0))
    }

    /// Names the next instruction, for jumps to it.
    package mutating func label(_ name: String) {
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

    /// After ``maskDestination(addressLength:family:)``: keeps the message when the route's
    /// prefix overlaps `network`/`length` (contains it, or lies inside it), else goes on at
    /// `otherwise`. A route prefix no longer than `length` overlaps when it contains the network
    /// address (``keepWhenPrefixContains(_:otherwise:)``); a longer one when its first `length`
    /// bits are the network's (its masked destination under the constant mask of `length` bits).
    /// A host prefix costs what ``keepWhenPrefixContains(_:otherwise:)`` does; a shorter one 2
    /// instructions, 3 per word it spans and a `ret` more.
    mutating func keepWhenPrefixOverlaps(_ network: [UInt8], length: Int, otherwise: String) {
        guard length < network.count * 8 else { return keepWhenPrefixContains(network, otherwise: otherwise) }
        typealias Op = LinuxBPF
        typealias Slot = NetlinkSocketFilter.Slot
        let longer = "\(otherwise)-longer"
        statement(Op.ld | Op.mem, Slot.destinationLength)
        jump(Op.jmp | Op.jgt | Op.k, UInt32(length), ifTrue: longer, ifFalse: nil)
        keepWhenPrefixContains(network, otherwise: otherwise)
        label(longer)
        for word in 0..<(network.count / 4) where 32 * word < length {
            let networkWord = network[(4 * word)..<(4 * word + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let bits = min(32, length - 32 * word)
            let mask = bits == 32 ? UInt32.max : ~(UInt32.max >> UInt32(bits))
            statement(Op.ld | Op.mem, Slot.maskedDestination[word])
            statement(Op.alu | Op.and | Op.k, mask)
            jump(Op.jmp | Op.jeq | Op.k, networkWord, ifTrue: nil, ifFalse: otherwise)
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
    package func assemble() -> [BPFInstruction] {
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
