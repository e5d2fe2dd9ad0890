@testable import RTNetlink
import XCTest

/// `RTM_NEWADDR` / `RTM_DELADDR`: `struct ifaddrmsg`, `IFA_LOCAL` over `IFA_ADDRESS`, `IFA_FLAGS`
/// over `ifa_flags`.
final class NetlinkParserAddressTests: XCTestCase {
    func testThatAPointToPointAddressIsReadFromHandWrittenBytes() throws {
        // Given
        let datagram = Fixture.ppp0Address

        // When
        let message = try parseSingleMessage(datagram)

        // Then: IFA_LOCAL (this host) wins over IFA_ADDRESS (the peer)
        XCTAssertEqual(HeaderFields(message.header), HeaderFields(length: 52, type: ABI.MessageType.newAddress, flags: 0, sequence: 0, portID: 0))
        guard case let .newAddress(address) = message.payload else { return XCTFail("payload \(message.payload)") }
        XCTAssertEqual(
            AddressFields(address),
            AddressFields(
                family: ABI.Family.ipv4, prefixLength: 32, flags: ABI.AddressFlag.permanent, scope: ABI.Scope.universe,
                index: 5, address: [100, 64, 1, 2]
            )
        )
    }

    func testThatTheLocalAddressWinsWhateverTheOrder() throws {
        let peer = Wire.attribute(ABI.AddressAttribute.address, [10, 64, 64, 64])
        let local = Wire.attribute(ABI.AddressAttribute.local, [100, 64, 1, 2])
        let label = Wire.attribute(ABI.AddressAttribute.label, Wire.cString("ppp0"))
        let rows: [(name: String, attributes: [UInt8], address: [UInt8]?, line: UInt)] = [
            ("IFA_ADDRESS then IFA_LOCAL", peer + local, [100, 64, 1, 2], #line),
            ("IFA_LOCAL then IFA_ADDRESS", local + peer, [100, 64, 1, 2], #line),
            ("IFA_LOCAL between other attributes", label + local + label + peer + label, [100, 64, 1, 2], #line),
            ("IFA_ADDRESS only (IPv6, broadcast links)", peer, [10, 64, 64, 64], #line),
            ("IFA_LOCAL only", local, [100, 64, 1, 2], #line),
            ("neither", label, nil, #line),
        ]
        for row in rows {
            // Given
            let datagram = Wire.message(
                type: ABI.MessageType.newAddress,
                body: Wire.addressInfo(family: ABI.Family.ipv4, prefixLength: 32, flags: 0, scope: ABI.Scope.universe, index: 5)
                    + row.attributes
            )

            // When
            let address = try parseSingleMessage(datagram, line: row.line).payload.address

            // Then
            XCTAssertEqual(address?.address, row.address, row.name, line: row.line)
        }
    }

    func testThatATentativeIPv6AddressTakesItsFlagsFromIfaFlags() throws {
        // Given
        let datagram = Fixture.tentativeIPv6Address

        // When
        let address = try parseSingleMessage(datagram).payload.address

        // Then
        XCTAssertEqual(
            address,
            AddressFields(
                family: ABI.Family.ipv6, prefixLength: 64, flags: ABI.AddressFlag.permanent | ABI.AddressFlag.tentative,
                scope: ABI.Scope.universe, index: 3, address: Fixture.documentationIPv6(0x10)
            )
        )
    }

    func testThatThe32BitFlagsAttributeOverridesThe8BitField() throws {
        let rows: [(name: String, headerFlags: UInt8, attribute: UInt32?, flags: UInt32, line: UInt)] = [
            ("8-bit field only", 0x80, nil, ABI.AddressFlag.permanent, #line),
            ("8-bit field only, tentative", 0x40, nil, ABI.AddressFlag.tentative, #line),
            ("tentative only in IFA_FLAGS", 0x00, ABI.AddressFlag.tentative, ABI.AddressFlag.tentative, #line),
            ("DAD failed only in IFA_FLAGS", 0x00, ABI.AddressFlag.duplicateAddressDetectionFailed,
             ABI.AddressFlag.duplicateAddressDetectionFailed, #line),
            ("DAD failed and tentative in IFA_FLAGS", 0x80,
             ABI.AddressFlag.duplicateAddressDetectionFailed | ABI.AddressFlag.tentative,
             ABI.AddressFlag.duplicateAddressDetectionFailed | ABI.AddressFlag.tentative, #line),
            ("bits above the 8-bit field", 0x80, ABI.AddressFlag.noPrefixRoute | ABI.AddressFlag.permanent,
             ABI.AddressFlag.noPrefixRoute | ABI.AddressFlag.permanent, #line),
            ("IFA_FLAGS clears what the 8-bit field says", 0x48, ABI.AddressFlag.noPrefixRoute, ABI.AddressFlag.noPrefixRoute, #line),
            ("IFA_FLAGS of zero", 0xff, 0, 0, #line),
        ]
        for row in rows {
            // Given
            var attributes = Wire.attribute(ABI.AddressAttribute.address, Fixture.documentationIPv6(1))
            if let value = row.attribute { attributes += Wire.attribute(ABI.AddressAttribute.flags, Wire.u32(value)) }
            let datagram = Wire.message(
                type: ABI.MessageType.newAddress,
                body: Wire.addressInfo(family: ABI.Family.ipv6, prefixLength: 64, flags: row.headerFlags, scope: ABI.Scope.universe, index: 3)
                    + attributes
            )

            // When
            let address = try parseSingleMessage(datagram, line: row.line).payload.address

            // Then
            XCTAssertEqual(address?.flags, row.flags, row.name, line: row.line)
        }
    }

    func testThatIfaddrmsgFieldsAreReadAtTheirOffsets() throws {
        let rows: [(family: UInt8, prefixLength: UInt8, flags: UInt8, scope: UInt8, index: Int32, bytes: [UInt8], line: UInt)] = [
            (ABI.Family.ipv4, 8, 0x80, ABI.Scope.host, 1, [127, 0, 0, 1], #line),
            (ABI.Family.ipv4, 24, 0x00, ABI.Scope.universe, 2, [192, 168, 1, 10], #line),
            (ABI.Family.ipv6, 64, 0x80, ABI.Scope.link, 3, [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1], #line),
            (ABI.Family.ipv6, 128, 0x02, ABI.Scope.universe, 0x7fff_ffff, Fixture.documentationIPv6(0xff), #line),
        ]
        for row in rows {
            // Given
            let datagram = Wire.message(
                type: ABI.MessageType.newAddress,
                body: Wire.addressInfo(family: row.family, prefixLength: row.prefixLength, flags: row.flags, scope: row.scope, index: row.index)
                    + Wire.attribute(ABI.AddressAttribute.address, row.bytes)
            )

            // When
            let address = try parseSingleMessage(datagram, line: row.line).payload.address

            // Then
            XCTAssertEqual(
                address,
                AddressFields(
                    family: row.family, prefixLength: row.prefixLength, flags: UInt32(row.flags), scope: row.scope,
                    index: row.index, address: row.bytes
                ),
                line: row.line
            )
        }
    }

    func testThatDeleteAddressCarriesTheSameFields() throws {
        // Given: the tentative IPv6 fixture, retyped RTM_DELADDR
        var datagram = Fixture.tentativeIPv6Address
        datagram[4] = UInt8(ABI.MessageType.deleteAddress)

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        guard case let .deleteAddress(address) = message.payload else { return XCTFail("payload \(message.payload)") }
        XCTAssertEqual(AddressFields(address).address, Fixture.documentationIPv6(0x10))
        XCTAssertEqual(AddressFields(address).flags, ABI.AddressFlag.permanent | ABI.AddressFlag.tentative)
    }

    func testThatRepeatedAddressAttributesMeanTheLastOne() throws {
        // Given
        let datagram = Wire.message(
            type: ABI.MessageType.newAddress,
            body: Wire.addressInfo(family: ABI.Family.ipv4, prefixLength: 24, flags: 0, scope: ABI.Scope.universe, index: 2)
                + Wire.attribute(ABI.AddressAttribute.address, [10, 0, 0, 1])
                + Wire.attribute(ABI.AddressAttribute.flags, Wire.u32(ABI.AddressFlag.tentative))
                + Wire.attribute(ABI.AddressAttribute.address, [10, 0, 0, 2])
                + Wire.attribute(ABI.AddressAttribute.flags, Wire.u32(ABI.AddressFlag.permanent))
        )

        // When
        let address = try parseSingleMessage(datagram).payload.address

        // Then
        XCTAssertEqual(address?.address, [10, 0, 0, 2])
        XCTAssertEqual(address?.flags, ABI.AddressFlag.permanent)
    }
}
