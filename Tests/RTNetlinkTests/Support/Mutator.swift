import TestSupport

/// Damages valid datagrams the ways real corruption and hostile senders would: bit flips,
/// truncation, rewritten length fields, retyped messages, splices.
struct Mutator {
    var generator: SplitMix64
    let corpus: [[UInt8]]

    /// One to three stacked mutations of a random corpus entry.
    mutating func next() -> [UInt8] {
        var bytes = corpus.randomElement(using: &generator)!
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            bytes = mutate(bytes)
        }
        return bytes
    }

    private mutating func mutate(_ original: [UInt8]) -> [UInt8] {
        var bytes = original
        switch Int.random(in: 0..<8, using: &generator) {
        case 0:  // flip 1 to 4 bits
            guard !bytes.isEmpty else { return bytes }
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            }
        case 1:  // truncate
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
        case 2:  // rewrite one message's nlmsg_len
            guard let offset = messageOffsets(bytes).randomElement(using: &generator) else { return bytes }
            let old = Int(Wire.readU32(bytes, at: offset))
            let candidates = [0, 1, 4, 15, 16, 17, 19, 20, old - 1, old + 1, old + 4, bytes.count - offset, bytes.count - offset + 1,
                              0xffff, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, Int.random(in: 0...256, using: &generator)]
            bytes.replaceSubrange(offset..<(offset + 4), with: Wire.u32(UInt32(truncatingIfNeeded: candidates.randomElement(using: &generator)!)))
        case 3:  // rewrite one attribute's rta_len
            guard let offset = attributeOffsets(bytes).randomElement(using: &generator) else { return bytes }
            let old = Int(Wire.readU16(bytes, at: offset))
            let candidates = [0, 1, 2, 3, 4, 5, 8, old - 1, old + 1, old + 3, old + 4, 0xffff, Int.random(in: 0...64, using: &generator)]
            bytes.replaceSubrange(offset..<(offset + 2), with: Wire.u16(UInt16(truncatingIfNeeded: candidates.randomElement(using: &generator)!)))
        case 4:  // retype one message
            guard let offset = messageOffsets(bytes).randomElement(using: &generator) else { return bytes }
            let types: [UInt16] = [1, 2, 3, 4, 16, 17, 18, 20, 21, 24, 25, 32, 33, 0, 0xffff]
            bytes.replaceSubrange((offset + 4)..<(offset + 6), with: Wire.u16(types.randomElement(using: &generator)!))
        case 5:  // overwrite a random byte or 32-bit word with an edge value
            guard bytes.count >= 4 else { return bytes }
            let offset = Int.random(in: 0...(bytes.count - 4), using: &generator)
            let values: [UInt32] = [0, 0xff, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff, UInt32.random(in: 0...UInt32.max, using: &generator)]
            bytes.replaceSubrange(offset..<(offset + 4), with: Wire.u32(values.randomElement(using: &generator)!))
        case 6:  // insert or delete a few bytes somewhere
            let offset = Int.random(in: 0...bytes.count, using: &generator)
            if Bool.random(using: &generator) || offset == bytes.count {
                bytes.insert(contentsOf: (0..<Int.random(in: 1...5, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }, at: offset)
            } else {
                bytes.removeSubrange(offset..<min(bytes.count, offset + Int.random(in: 1...5, using: &generator)))
            }
        default:  // splice: a prefix of this one and a suffix of another
            let other = corpus.randomElement(using: &generator)!
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
                + Array(other.suffix(Int.random(in: 0...other.count, using: &generator)))
        }
        return bytes
    }

    /// Offsets of well-framed messages.
    private func messageOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = 0
        for frame in ParserOracle.frames(of: bytes) {
            guard case let .message(header) = frame else { break }
            offsets.append(offset)
            offset += (Int(header.length) + 3) & ~3
        }
        return offsets
    }

    /// Offsets of the top-level attributes of well-framed links, addresses and routes.
    private func attributeOffsets(_ bytes: [UInt8]) -> [Int] {
        let fixedSizes: [UInt16: Int] = [16: 16, 17: 16, 20: 8, 21: 8, 24: 12, 25: 12]
        var offsets: [Int] = []
        for start in messageOffsets(bytes) {
            let end = start + Int(Wire.readU32(bytes, at: start))
            guard let fixed = fixedSizes[Wire.readU16(bytes, at: start + 4)] else { continue }
            var offset = start + ABI.Size.header + fixed
            while offset + ABI.Size.attributeHeader <= end {
                offsets.append(offset)
                let length = Int(Wire.readU16(bytes, at: offset))
                guard length >= ABI.Size.attributeHeader else { break }
                offset += (length + 3) & ~3
            }
        }
        return offsets
    }
}
