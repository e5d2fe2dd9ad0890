import ReachabilityCore
import XCTest

/// ``NetworkIdentity`` and the SHA-256 beneath it.
final class NetworkIdentityTests: XCTestCase {
    private static func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    func testSHA256AndHMACMatchThePublishedVectors() {
        // Given FIPS 180-4's examples and RFC 4231's test cases 2 and 6 (a key longer than a block)
        let rows: [(digest: [UInt8], expected: String, line: UInt)] = [
            (SHA256.hash([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", #line),
            (SHA256.hash(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", #line),
            (SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", #line),
            (SHA256.hmac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", #line),
            (SHA256.hmac(key: [UInt8](repeating: 0xaa, count: 131), message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", #line),
        ]
        for row in rows {
            // When, Then
            XCTAssertEqual(Self.hex(row.digest), row.expected, line: row.line)
        }
    }

    func testTheIdFollowsTheGatewayAndTheMachine() {
        // Given two machines' keys and two gateways
        let host = [UInt8](repeating: 1, count: 16), otherHost = [UInt8](repeating: 2, count: 16)
        let gateway: [UInt8] = [0x02, 0x00, 0x5e, 0x10, 0x00, 0x01], otherGateway: [UInt8] = [0x02, 0x00, 0x5e, 0x10, 0x00, 0x02]
        let id = NetworkIdentity.id(gatewayLinkLayerAddress: gateway, key: host)

        // Then: 32 hex digits, the same for the same gateway, another for another gateway, SSID or host
        XCTAssertEqual(id.count, 32)
        XCTAssertEqual(NetworkIdentity.id(gatewayLinkLayerAddress: gateway, key: host), id)
        XCTAssertNotEqual(NetworkIdentity.id(gatewayLinkLayerAddress: otherGateway, key: host), id)
        XCTAssertNotEqual(NetworkIdentity.id(gatewayLinkLayerAddress: gateway, ssid: Array("cafe".utf8), key: host), id)
        XCTAssertNotEqual(NetworkIdentity.id(gatewayLinkLayerAddress: gateway, key: otherHost), id)
        // And "" without the address or a key
        XCTAssertEqual(NetworkIdentity.id(gatewayLinkLayerAddress: nil, key: host), "")
        XCTAssertEqual(NetworkIdentity.id(gatewayLinkLayerAddress: [], key: host), "")
        XCTAssertEqual(NetworkIdentity.id(gatewayLinkLayerAddress: gateway, key: []), "")
    }
}
