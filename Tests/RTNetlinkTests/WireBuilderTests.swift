import XCTest

/// The test-only builder lays structs out as the kernel does: checked against the fixtures
/// written byte by byte, so that the builder's own fixtures can be trusted.
final class WireBuilderTests: XCTestCase {
    func testThatTheBuilderLaysOutTheHandWrittenLink() {
        // Given, When
        let built = Wire.message(
            type: ABI.MessageType.newLink,
            body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 2, flags: ABI.LinkFlag.up | ABI.LinkFlag.lowerUp)
                + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0"))
                + Wire.attribute(ABI.LinkAttribute.mtu, Wire.u32(1500))
                + Wire.nested(ABI.LinkAttribute.linkInfo, [Wire.attribute(ABI.LinkAttribute.infoKind, Wire.cString("veth"))])
        )

        // Then
        XCTAssertEqual(built, Fixture.eth0Link)
    }

    func testThatTheBuilderLaysOutTheHandWrittenAddress() {
        // Given, When
        let built = Wire.message(
            type: ABI.MessageType.newAddress,
            body: Wire.addressInfo(family: ABI.Family.ipv4, prefixLength: 32, flags: 0x80, scope: ABI.Scope.universe, index: 5)
                + Wire.attribute(ABI.AddressAttribute.address, [10, 64, 64, 64])
                + Wire.attribute(ABI.AddressAttribute.local, [100, 64, 1, 2])
                + Wire.attribute(ABI.AddressAttribute.label, Wire.cString("ppp0"))
        )

        // Then
        XCTAssertEqual(built, Fixture.ppp0Address)
    }

    func testThatTheBuilderLaysOutRtmsgFieldByField() {
        // Given, When
        let built = Wire.routeInfo(
            family: 2, destinationLength: 3, sourceLength: 4, tos: 5, table: 6, protocol: 7, scope: 8, type: 9, flags: 0x0d0c_0b0a
        )

        // Then: rtm_family, dst_len, src_len, tos, table, protocol, scope, type, flags (LE)
        XCTAssertEqual(built, [2, 3, 4, 5, 6, 7, 8, 9, 0x0a, 0x0b, 0x0c, 0x0d])
    }

    func testThatScalarsAreLittleEndian() {
        // Given, When, Then
        XCTAssertEqual(Wire.u16(0x0102), [0x02, 0x01])
        XCTAssertEqual(Wire.u32(0x0102_0304), [0x04, 0x03, 0x02, 0x01])
        XCTAssertEqual(Wire.i32(-101), [0x9b, 0xff, 0xff, 0xff])
        XCTAssertEqual(Wire.readU32([0x04, 0x03, 0x02, 0x01], at: 0), 0x0102_0304)
    }
}
