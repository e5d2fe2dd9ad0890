import NetworkTypes
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

    func testThatARouterThatStopsBeingOneTakesOnlyWhatItAdvertisedWithIt() {
        // Given / When / Then, row by row on link 2: router A advertises, B and C leave
        let (a, b) = (IPAddress("fe80::a")!, IPAddress("fe80::b")!)
        enum Step { case advertise(String?, by: IPAddress?), dhcp(String), leaves(IPAddress, link: InterfaceIndex) }
        let rows: [(step: Step, changed: Bool, asked: String?, line: UInt)] = [
            (.advertise("https://a/api", by: a), true, "https://a/api", #line),
            (.dhcp("https://dhcp/api"), true, "https://a/api", #line),
            (.leaves(b, link: 2), false, "https://a/api", #line),  // another router on the link
            (.leaves(a, link: 3), false, "https://a/api", #line),  // the same address on another link
            (.leaves(a, link: 2), true, "https://dhcp/api", #line),  // DHCP's stays
            (.advertise("https://a/api", by: a), true, "https://a/api", #line),
            (.advertise("https://a/api", by: b), false, "https://a/api", #line),  // B now says it
            (.leaves(a, link: 2), false, "https://a/api", #line),
            (.leaves(b, link: 2), true, "https://dhcp/api", #line),
            (.advertise("https://a/api", by: a), true, "https://a/api", #line),
            (.advertise(nil, by: a), true, "https://dhcp/api", #line),  // A said nothing more
            (.leaves(a, link: 2), false, "https://dhcp/api", #line),
        ]
        var apis = AdvertisedCaptivePortalAPIs()
        for row in rows {
            let changed = switch row.step {
            case let .advertise(uri, router): apis.set(uri, for: 2, from: .routerAdvertisement, router: router)
            case let .dhcp(uri): apis.set(uri, for: 2, from: .networkdDHCPv4)
            case let .leaves(router, link): apis.forget(router: router, on: link)
            }
            XCTAssertEqual(changed, row.changed, line: row.line)
            XCTAssertEqual(apis.uri(for: 2), row.asked, line: row.line)
        }
    }
}
