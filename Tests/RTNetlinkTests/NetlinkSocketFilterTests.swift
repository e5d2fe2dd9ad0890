#if canImport(Glibc)
import Glibc
#endif
@testable import RTNetlink
import NetworkTypes
import TestSupport
import XCTest

/// The monitor socket's classic-BPF filter: which route messages it keeps, run by a small
/// interpreter of the kernel's semantics over byte fixtures, and accepted by the real kernel.
/// Addresses of 4 or 16 bytes as values.
private func addresses(_ list: [[UInt8]]) -> [IPAddress] {
    list.map { IPAddress(family: $0.count == 4 ? .ipv4 : .ipv6, bytes: $0)! }
}

final class NetlinkSocketFilterTests: XCTestCase {
    private let filter = NetlinkSocketFilter.routesContaining(addresses([[8, 8, 8, 8], NetlinkSocketFilterTests.googleIPv6]))
    private static let googleIPv6: [UInt8] = [0x20, 0x01, 0x48, 0x60, 0x48, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x88]

    func testThatTheKernelAcceptsTheProgram() throws {
        // Given an unbound rtnetlink socket (no privilege needed)
        let socket = try NetlinkSocket.open()
        defer { socket.close() }

        // When / Then
        XCTAssertNoThrow(try filter.attach(to: socket), "program: \(filter.instructions)")
    }

    func testThatTheNeighbourFilterKeepsOnlyTheFollowedGatewaysEntries() throws {
        // Given a filter following one gateway per family, and one following none
        let ipv6Gateway: [UInt8] = [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]
        let following = NetlinkSocketFilter.neighboursOf(addresses([[10, 77, 0, 1], ipv6Gateway]))
        let none = NetlinkSocketFilter.neighboursOf([])
        let socket = try NetlinkSocket.open()
        defer { socket.close() }
        XCTAssertNoThrow(try following.attach(to: socket), "program: \(following.instructions)")

        // When / Then: the gateways' entries, new or deleted, pass
        XCTAssertTrue(keeps(neighbour(ABI.Family.ipv4, [10, 77, 0, 1]), by: following))
        XCTAssertTrue(keeps(neighbour(ABI.Family.ipv4, [10, 77, 0, 1], type: ABI.MessageType.deleteNeighbour), by: following))
        XCTAssertTrue(keeps(neighbour(ABI.Family.ipv6, ipv6Gateway), by: following))
        // and every other neighbour of the LAN, any family, is dropped
        for other in [[10, 77, 0, 2], [10, 77, 1, 1], [11, 77, 0, 1], [0, 0, 0, 0]] as [[UInt8]] {
            XCTAssertFalse(keeps(neighbour(ABI.Family.ipv4, other), by: following), "\(other)")
        }
        var otherIPv6 = ipv6Gateway
        otherIPv6[15] = 2
        XCTAssertFalse(keeps(neighbour(ABI.Family.ipv6, otherIPv6), by: following))
        XCTAssertFalse(keeps(neighbour(ABI.Family.ipv4, [10, 77, 0, 1]), by: none), "no gateway followed")
        XCTAssertFalse(keeps(neighbour(ABI.Family.ipv6, ipv6Gateway), by: none), "no gateway followed")
        XCTAssertFalse(keeps(neighbour(7, [2, 0, 0, 0, 0, 1]), by: following), "a bridge forwarding entry (AF_BRIDGE)")
        // while what cannot be decided is kept
        XCTAssertTrue(keeps(Wire.message(type: ABI.MessageType.newNeighbour, body: [ABI.Family.ipv4, 0]), by: none), "a truncated ndmsg")
        XCTAssertTrue(keeps(Wire.message(type: ABI.MessageType.newNeighbour, body: Wire.neighbourInfo(family: ABI.Family.ipv4, index: 2, state: 0)), by: none), "no NDA_DST")
        XCTAssertTrue(keeps(ipv4Route(destination: [10, 0, 0, 0], length: 8), by: none), "not a neighbour message")
        // and the route filter is not involved: it keeps neighbour messages like any non-route one
        XCTAssertTrue(keeps(neighbour(ABI.Family.ipv4, [10, 77, 0, 2])))
    }

    func testThatDefaultRoutesAreKept() {
        XCTAssertTrue(keeps(ipv4Route(destination: nil, length: 0)))
        XCTAssertTrue(keeps(ipv4Route(destination: nil, length: 0, type: ABI.MessageType.deleteRoute)))
        XCTAssertTrue(keeps(ipv6Route(destination: nil, length: 0)))
    }

    func testThatRoutesContainingTheProbeAreKept() {
        // Given the prefixes VPN clients use, and ever more specific ones down to the probe itself
        let ipv4: [([UInt8], UInt8)] = [
            ([0, 0, 0, 0], 1), ([8, 0, 0, 0], 5), ([8, 0, 0, 0], 7), ([8, 0, 0, 0], 8), ([8, 8, 0, 0], 16),
            ([8, 8, 8, 0], 24), ([8, 8, 8, 8], 31), ([8, 8, 8, 8], 32),
        ]
        for (destination, length) in ipv4 {
            XCTAssertTrue(keeps(ipv4Route(destination: destination, length: length)), "\(destination)/\(length)")
        }
        let ipv6: [([UInt8], UInt8)] = [
            ([0x20] + [UInt8](repeating: 0, count: 15), 3), (Array(Self.googleIPv6.prefix(4)) + [UInt8](repeating: 0, count: 12), 32),
            (Array(Self.googleIPv6.prefix(6)) + [UInt8](repeating: 0, count: 10), 48), (Self.googleIPv6, 127), (Self.googleIPv6, 128),
        ]
        for (destination, length) in ipv6 {
            XCTAssertTrue(keeps(ipv6Route(destination: destination, length: length)), "\(destination)/\(length)")
        }
    }

    func testThatRoutesExcludingTheProbeAreDropped() {
        let ipv4: [([UInt8], UInt8)] = [
            ([128, 0, 0, 0], 1), ([10, 0, 0, 0], 8), ([100, 64, 0, 1], 32), ([8, 8, 4, 0], 24), ([8, 8, 8, 9], 32), ([9, 0, 0, 0], 8),
        ]
        for (destination, length) in ipv4 {
            XCTAssertFalse(keeps(ipv4Route(destination: destination, length: length)), "\(destination)/\(length)")
            XCTAssertFalse(keeps(ipv4Route(destination: destination, length: length, type: ABI.MessageType.deleteRoute)))
        }
        var nextHost = Self.googleIPv6
        nextHost[15] ^= 1
        let ipv6: [([UInt8], UInt8)] = [
            ([0xff] + [UInt8](repeating: 0, count: 15), 8), ([0xfe, 0x80] + [UInt8](repeating: 0, count: 14), 64),
            ([0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 12), 32), (nextHost, 128),
        ]
        for (destination, length) in ipv6 {
            XCTAssertFalse(keeps(ipv6Route(destination: destination, length: length)), "\(destination)/\(length)")
        }
    }

    func testThatEverythingElseIsKept() {
        // Links, addresses, rules, nexthop objects, errors: never filtered
        XCTAssertTrue(keeps(Fixture.ipv4DefaultRoute))
        for (name, datagram) in Fixture.all
        where ![ABI.MessageType.newRoute, ABI.MessageType.deleteRoute].contains(Wire.readU16(datagram, at: 4)) {
            XCTAssertTrue(keeps(datagram), name)
        }
        // Two messages in one datagram: the program looks at one message only, so it keeps both
        let irrelevant = ipv4Route(destination: [10, 0, 0, 0], length: 8)
        XCTAssertTrue(keeps(irrelevant + irrelevant))
        // RTA_DST beyond the attributes scanned: kept
        let padding = (0..<NetlinkSocketFilter.maximumAttributesScanned).map { _ in Wire.attribute(ABI.RouteAttribute.priority, Wire.u32(1)) }
        XCTAssertTrue(keeps(ipv4Route(destination: [10, 0, 0, 0], length: 8, attributesBefore: padding)))
        // Truncated: RTA_DST running past the end; shorter than struct rtmsg
        let cut = ABI.Size.header + ABI.Size.routeInfo + 8 + ABI.Size.attributeHeader + 2  // 2 bytes into RTA_DST's address
        XCTAssertTrue(keeps(Wire.u32(UInt32(cut)) + irrelevant[4..<cut]))
        XCTAssertTrue(keeps(Wire.message(type: ABI.MessageType.newRoute, body: [2, 8, 0, 0])))
        // Unknown family
        XCTAssertTrue(keeps(route(family: 7, destination: [10, 0, 0, 0], length: 8)))
    }

    func testThatTheFirstAttributesMayPrecedeTheDestination() {
        // Given RTA_DST after RTA_TABLE and RTA_PRIORITY (within the scanned attributes)
        let before = [Wire.attribute(ABI.RouteAttribute.priority, Wire.u32(5))]
        XCTAssertFalse(keeps(ipv4Route(destination: [10, 0, 0, 0], length: 8, attributesBefore: before)))
        XCTAssertTrue(keeps(ipv4Route(destination: [8, 0, 0, 0], length: 8, attributesBefore: before)))
    }

    // MARK: - Many destinations (the probes and the addresses clients asked about)

    func testThatAPrefixContainingAnyListedDestinationIsKeptAtTheMaximum() {
        // Given the most destinations per family, distinct and spread over the address space
        let count = NetlinkSocketFilter.maximumDestinationsPerFamily
        let ipv4 = (0..<count).map { [UInt8(10 + $0), UInt8($0), 1, 1] }
        let ipv6 = (0..<count).map { [0x20, 0x01, 0x0d, 0xb8, UInt8($0), 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8($0), 1] }
        let filter = NetlinkSocketFilter.routesContaining(addresses(ipv4 + ipv6))

        // Then every destination's own prefixes are kept, the first and the last in the program alike
        for (index, address) in ipv4.enumerated() {
            for length: UInt8 in [8, 16, 24, 32] {
                XCTAssertTrue(keeps(ipv4Route(destination: masked(address, length), length: length), by: filter), "\(address)/\(length) (#\(index))")
            }
            // and its neighbours' are not (only one address per /16)
            XCTAssertFalse(keeps(ipv4Route(destination: [address[0], address[1], 2, 0], length: 24), by: filter), "\(address) neighbour")
        }
        for (index, address) in ipv6.enumerated() {
            for length: UInt8 in [40, 64, 100, 128] {
                XCTAssertTrue(keeps(ipv6Route(destination: masked(address, length), length: length), by: filter), "\(address)/\(length) (#\(index))")
            }
            var other = address
            other[15] ^= 0x80
            XCTAssertFalse(keeps(ipv6Route(destination: other, length: 128), by: filter), "\(address) neighbour")
        }
        XCTAssertFalse(keeps(ipv4Route(destination: [192, 168, 0, 0], length: 16), by: filter))
        XCTAssertFalse(keeps(ipv6Route(destination: [0xfd] + [UInt8](repeating: 0, count: 15), length: 8), by: filter))
        XCTAssertTrue(keeps(ipv4Route(destination: nil, length: 0), by: filter))
        print("FIGURE: netlink socket filter: \(filter.instructions.count) instructions for \(count) IPv4 + \(count) IPv6 destinations")
    }

    func testThatTheFilterAgreesWithThePrefixRuleOnRandomRoutes() {
        // Given a few destinations per family and random prefixes, many of them near those
        var generator = SplitMix64(seed: 42)
        let ipv4 = (0..<5).map { _ in (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let ipv6 = (0..<5).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let filter = NetlinkSocketFilter.routesContaining(addresses(ipv4 + ipv6))
        for _ in 0..<3000 {
            let isIPv4 = Bool.random(using: &generator)
            let addresses = isIPv4 ? ipv4 : ipv6
            var prefix = addresses.randomElement(using: &generator)!
            // flip one bit somewhere: inside the prefix it excludes the address, past it not
            let bit = Int.random(in: 0..<(prefix.count * 8), using: &generator)
            prefix[bit / 8] ^= 0x80 >> UInt8(bit % 8)
            let length = UInt8.random(in: 1...UInt8(prefix.count * 8), using: &generator)
            prefix = masked(prefix, length)
            let expected = addresses.contains { IPAddressBytes.prefix(prefix, length: length, contains: $0) }

            // When
            let kept = keeps(isIPv4 ? ipv4Route(destination: prefix, length: length) : ipv6Route(destination: prefix, length: length), by: filter)

            // Then
            XCTAssertEqual(kept, expected, "\(prefix)/\(length)")
        }
    }

    func testThatPrefixesCoveringMoreAddressesThanTheFilterListsKeepExactlyTheOverlappingRoutes() {
        // Given 60 random addresses per family, covered by 17 prefixes each (the daemon's room)
        var generator = SplitMix64(seed: 29)
        let families = [4, 16].map { width in
            Set((0..<60).map { _ in (0..<width).map { _ in UInt8.random(in: 0...255, using: &generator) } }).sorted { $0.lexicographicallyPrecedes($1) }
        }
        let prefixes = families.map { IPPrefix.aggregating(addresses($0), into: 17) }
        XCTAssertEqual(prefixes.map(\.count), [17, 17])
        let filter = NetlinkSocketFilter.routesOverlapping(prefixes.flatMap { $0 })
        for _ in 0..<1000 {
            // When a route near a followed address (one bit flipped) of any length comes
            let family = Int.random(in: 0...1, using: &generator)
            let width = family == 0 ? 4 : 16
            var destination = families[family].randomElement(using: &generator)!
            let bit = Int.random(in: 0..<(width * 8), using: &generator)
            destination[bit / 8] ^= 0x80 >> UInt8(bit % 8)
            let length = UInt8.random(in: 1...UInt8(width * 8), using: &generator)
            destination = masked(destination, length)
            let route = IPPrefix(IPAddress(family: family == 0 ? .ipv4 : .ipv6, bytes: destination)!, length: Int(length))

            // Then it is kept exactly when it overlaps a prefix
            let overlaps = prefixes[family].contains { $0.contains(route.network) || route.contains($0.network) }
            let datagram = family == 0 ? ipv4Route(destination: destination, length: length) : ipv6Route(destination: destination, length: length)
            XCTAssertEqual(keeps(datagram, by: filter), overlaps, "\(route)")
            // and always when it contains a followed address
            if families[family].contains(where: { IPAddressBytes.prefix(destination, length: length, contains: $0) }) {
                XCTAssertTrue(keeps(datagram, by: filter), "\(route) contains a followed address")
            }
        }
        print("FIGURE: netlink socket filter: \(filter.instructions.count) instructions for 17 IPv4 + 17 IPv6 prefixes covering 60 addresses each")
    }

    func testThatTheKernelAcceptsAndReplacesTheProgramAtTheMaximum() throws {
        // Given a program larger than the daemon's largest (16 watched destinations and a probe
        // per family) and the largest one allowed, and a socket already filtered
        let socket = try NetlinkSocket.open()
        defer { socket.close() }
        try filter.attach(to: socket)
        for count in [65, NetlinkSocketFilter.maximumDestinationsPerFamily] {
            let assembling = ContinuousClock.now
            let large = NetlinkSocketFilter.routesContaining(addresses(
                (0..<count).map { [10, UInt8($0), 0, 1] } + (0..<count).map { [0xfd, UInt8($0)] + [UInt8](repeating: 0, count: 13) + [1] }
            ))
            let assembled = (ContinuousClock.now - assembling) / .microseconds(1)
            XCTAssertLessThanOrEqual(large.instructions.count, 4096, "BPF_MAXINSNS")

            // When it replaces the one attached, again and again (as each new watched destination does)
            let rounds = 200
            let started = ContinuousClock.now
            for _ in 0..<rounds { try large.attach(to: socket) }
            let microseconds = (ContinuousClock.now - started) / rounds / .microseconds(1)

            // Then the kernel took it every time
            print("FIGURE: netlink socket filter: \(count) + \(count) destinations, \(large.instructions.count) instructions, assembled in \(Int(assembled)) µs, replaced in \(Int(microseconds)) µs (mean of \(rounds))")
        }
    }

    // MARK: - Fixtures

    private func ipv4Route(destination: [UInt8]?, length: UInt8, type: UInt16 = ABI.MessageType.newRoute, attributesBefore: [[UInt8]] = []) -> [UInt8] {
        route(family: ABI.Family.ipv4, destination: destination, length: length, type: type, attributesBefore: attributesBefore)
    }

    /// `address` with the bits past `length` cleared, as the kernel reports a prefix.
    private func masked(_ address: [UInt8], _ length: UInt8) -> [UInt8] {
        address.enumerated().map { index, byte in
            let bits = Int(length) - 8 * index
            return bits >= 8 ? byte : bits <= 0 ? 0 : byte & ~(UInt8.max >> bits)
        }
    }

    private func ipv6Route(destination: [UInt8]?, length: UInt8) -> [UInt8] {
        route(family: ABI.Family.ipv6, destination: destination, length: length)
    }

    /// A route notification laid out as the kernel sends it: RTA_TABLE, then RTA_DST, then the rest.
    private func route(
        family: UInt8, destination: [UInt8]?, length: UInt8, type: UInt16 = ABI.MessageType.newRoute, attributesBefore: [[UInt8]] = []
    ) -> [UInt8] {
        var body = Wire.routeInfo(
            family: family, destinationLength: length, table: ABI.Table.main, protocol: ABI.RouteProtocol.dhcp,
            scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
        )
        body += Wire.attribute(ABI.RouteAttribute.table, Wire.u32(254))
        body += attributesBefore.flatMap { $0 }
        if let destination { body += Wire.attribute(ABI.RouteAttribute.destination, destination) }
        body += Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(2))
        return Wire.message(type: type, body: body)
    }

    /// A neighbour notification as the kernel sends it: ndmsg, NDA_DST, NDA_LLADDR.
    private func neighbour(_ family: UInt8, _ address: [UInt8], type: UInt16 = ABI.MessageType.newNeighbour) -> [UInt8] {
        Wire.message(
            type: type,
            body: Wire.neighbourInfo(family: family, index: 2, state: ABI.Neighbour.failed) + Wire.attribute(ABI.Neighbour.destination, address)
                + Wire.attribute(ABI.Neighbour.linkLayerAddress, [2, 0, 0, 0, 0, 1])
        )
    }

    private func keeps(_ datagram: [UInt8], by filter: NetlinkSocketFilter? = nil) -> Bool {
        ClassicBPF.run((filter ?? self.filter).instructions, on: datagram) != 0
    }
}

/// An interpreter of classic BPF with the kernel's semantics: big-endian halfword and word
/// loads, out-of-bounds loads end the program with 0 (drop), division by zero drops.
enum ClassicBPF {
    static func run(_ program: [BPFInstruction], on packet: [UInt8]) -> UInt32 {
        var a: UInt32 = 0
        var x: UInt32 = 0
        var memory = [UInt32](repeating: 0, count: 16)
        var pc = 0
        func load(_ offset: Int, _ size: Int) -> UInt32? {
            guard offset >= 0, offset + size <= packet.count else { return nil }
            return packet[offset..<(offset + size)].reduce(0) { $0 << 8 | UInt32($1) }
        }
        while pc < program.count {
            let instruction = program[pc]
            let code = instruction.code, k = instruction.constant
            pc += 1
            switch code & 0x07 {
            case 0x00, 0x01:  // LD, LDX
                let size = [0x00: 4, 0x08: 2, 0x10: 1][Int(code & 0x18)] ?? 4
                let value: UInt32
                switch code & 0xe0 {
                case 0x00: value = k  // IMM
                case 0x20: guard let loaded = load(Int(k), size) else { return 0 }; value = loaded  // ABS
                case 0x40: guard let loaded = load(Int(x &+ k), size) else { return 0 }; value = loaded  // IND
                case 0x60: value = memory[Int(k)]  // MEM
                case 0x80: value = UInt32(packet.count)  // LEN
                default: preconditionFailure("unsupported load 0x\(String(code, radix: 16))")
                }
                if code & 0x07 == 0x00 { a = value } else { x = value }
            case 0x02: memory[Int(k)] = a  // ST
            case 0x03: memory[Int(k)] = x  // STX
            case 0x04:  // ALU
                let operand = code & 0x08 != 0 ? x : k
                switch code & 0xf0 {
                case 0x00: a = a &+ operand
                case 0x10: a = a &- operand
                case 0x20: a = a &* operand
                case 0x30: guard operand != 0 else { return 0 }; a /= operand
                case 0x40: a |= operand
                case 0x50: a &= operand
                case 0x60: a = operand >= 32 ? 0 : a << operand
                case 0x70: a = operand >= 32 ? 0 : a >> operand
                case 0x80: a = 0 &- a
                case 0xa0: a ^= operand
                default: preconditionFailure("unsupported ALU 0x\(String(code, radix: 16))")
                }
            case 0x05:  // JMP
                let operand = code & 0x08 != 0 ? x : k
                let taken: Bool
                switch code & 0xf0 {
                case 0x00: pc += Int(k); continue
                case 0x10: taken = a == operand
                case 0x20: taken = a > operand
                case 0x30: taken = a >= operand
                case 0x40: taken = a & operand != 0
                default: preconditionFailure("unsupported jump 0x\(String(code, radix: 16))")
                }
                pc += Int(taken ? instruction.jumpIfTrue : instruction.jumpIfFalse)
            case 0x06: return code & 0x18 == 0x10 ? a : k  // RET
            case 0x07: if code & 0xf8 == 0x80 { a = x } else { x = a }  // MISC: TXA / TAX
            default: preconditionFailure("unreachable")
            }
        }
        preconditionFailure("program fell off its end")
    }
}
