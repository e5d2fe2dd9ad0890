import ReachabilityCore
import XCTest
@testable import ReachabilityEngine

/// The captive-portal APIs advertised per link and source (RFC 8910).
final class AdvertisedCaptivePortalAPIsTests: XCTestCase {
    func testThatEachSourceSetsAndClearsItsOwnAndTheRouterAdvertisementComesFirst() {
        // Given / When / Then, row by row on link 2
        typealias Source = AdvertisedCaptivePortalAPIs.Source
        let rows: [(uri: String?, source: Source, changed: Bool, asked: String?, line: UInt)] = [
            ("https://dhcp/api", .networkdDHCPv4, true, "https://dhcp/api", #line),
            ("https://dhcp/api", .networkdDHCPv4, false, "https://dhcp/api", #line),
            ("https://ra/api", .routerAdvertisement, true, "https://ra/api", #line),
            (AdvertisedCaptivePortalAPIs.unrestricted, .routerAdvertisement, true, "https://dhcp/api", #line),
            ("", .networkdDHCPv4, true, nil, #line),
            (nil, .networkdDHCPv4, false, nil, #line),
        ]
        var apis = AdvertisedCaptivePortalAPIs()
        for row in rows {
            XCTAssertEqual(apis.set(row.uri, for: 2, from: row.source), row.changed, line: row.line)
            XCTAssertEqual(apis.uri(for: 2), row.asked, line: row.line)
        }
        XCTAssertEqual(apis, AdvertisedCaptivePortalAPIs(), "nothing left")

        apis.set("https://a/", for: 3, from: .networkdDHCPv4)
        apis.set("https://b/", for: 3, from: .routerAdvertisement)
        XCTAssertEqual(apis.advertised(on: 3).map(\.uri), ["https://b/", "https://a/"])
        apis.forget(3)
        XCTAssertNil(apis.uri(for: 3))
    }
}
