import NetworkTypes
import RTNetlink
import XCTest
@testable import ReachabilityEngine

/// The NAT64 prefixes routers advertise (RFC 8781), with their lifetimes, and the one in use.
final class AdvertisedNAT64PrefixesTests: XCTestCase {
    private let (a, b) = (IPAddress("fe80::a")!, IPAddress("fe80::b")!)

    private func option(_ prefix: String, _ length: Int, lifetime: UInt32) -> NAT64PrefixOption {
        NAT64PrefixOption(prefix: IPPrefix(IPAddress(prefix)!, length: length), lifetimeSeconds: lifetime)
    }

    func testThatLifetimesRefreshWithdrawAndExpireAndRoutersAndLinksTakeTheirOwn() {
        // Given / When / Then, row by row; IPv6's route on link 2
        enum Step {
            case advertise(String, Int, lifetime: UInt32, link: InterfaceIndex, by: IPAddress, at: Double)
            case expire(at: Double)
            case routerLeaves(IPAddress, link: InterfaceIndex)
            case linkDown(InterfaceIndex)
        }
        let rows: [(step: Step, changed: Bool, inUse: String?, next: Double?, line: UInt)] = [
            (.advertise("64:ff9b::", 96, lifetime: 1800, link: 2, by: a, at: 0), true, "64:ff9b::/96", 1800, #line),
            (.advertise("64:ff9b::", 96, lifetime: 1800, link: 2, by: a, at: 100), false, "64:ff9b::/96", 1900, #line),  // refreshed
            (.advertise("2001:db8:64::", 64, lifetime: 600, link: 2, by: b, at: 200), true, "64:ff9b::/96", 800, #line),  // learned later
            (.expire(at: 799), false, "64:ff9b::/96", 800, #line),
            (.expire(at: 800), true, "64:ff9b::/96", 1900, #line),
            (.advertise("64:ff9b::", 96, lifetime: 0, link: 2, by: a, at: 900), true, nil, nil, #line),  // withdrawn
            (.advertise("2001:db8::", 32, lifetime: 8, link: 3, by: a, at: 1000), true, "2001:db8::/32", 1008, #line),  // off IPv6's link
            (.advertise("2001:db8:1::", 48, lifetime: 80, link: 2, by: b, at: 1001), true, "2001:db8:1::/48", 1008, #line),  // on it: preferred
            (.routerLeaves(a, link: 2), false, "2001:db8:1::/48", 1008, #line),  // a advertised on link 3 only
            (.routerLeaves(b, link: 2), true, "2001:db8::/32", 1008, #line),
            (.linkDown(2), false, "2001:db8::/32", 1008, #line),
            (.linkDown(3), true, nil, nil, #line),
        ]
        var prefixes = AdvertisedNAT64Prefixes()
        for row in rows {
            let changed = switch row.step {
            case let .advertise(prefix, length, lifetime, link, router, now):
                prefixes.set(option(prefix, length, lifetime: lifetime), on: link, router: router, now: now)
            case let .expire(now): prefixes.expire(now: now)
            case let .routerLeaves(router, link): prefixes.forget(router: router, on: link)
            case let .linkDown(link): prefixes.forget(link)
            }
            XCTAssertEqual(changed, row.changed, line: row.line)
            XCTAssertEqual(prefixes.inUse(ipv6Link: 2)?.prefix.description, row.inUse, line: row.line)
            XCTAssertEqual(prefixes.nextExpiry, row.next, line: row.line)
        }
    }

    func testThatExplainSaysWhereEachPrefixCameFromAndWhichIsUsedAndWhy() {
        // Given two routers' prefixes on link 2, then one on link 3
        var prefixes = AdvertisedNAT64Prefixes()
        let name: (InterfaceIndex) -> String = { "eth\($0.rawValue)" }
        XCTAssertEqual(prefixes.explanation(ipv6Link: 2, now: 0, linkName: name), ["NAT64 prefix: none (no router advertised one)"])
        prefixes.set(option("64:ff9b::", 96, lifetime: 1800), on: 3, router: a, now: 0)
        XCTAssertEqual(prefixes.explanation(ipv6Link: 2, now: 0.5, linkName: name), [
            "NAT64 prefix: 64:ff9b::/96 (the only one known)",
            "  64:ff9b::/96 from router advertisement (RFC 8781) by fe80::a on eth3, 1800 s left",
        ])
        prefixes.set(option("2001:db8:64::", 64, lifetime: 600), on: 2, router: b, now: 10)
        XCTAssertEqual(prefixes.explanation(ipv6Link: 2, now: 10, linkName: name).first, "NAT64 prefix: 2001:db8:64::/64 (advertised on the link of IPv6's route)")
        XCTAssertEqual(prefixes.explanation(ipv6Link: nil, now: 10, linkName: name).first, "NAT64 prefix: 64:ff9b::/96 (learned first)")
    }

    func testThatNetworkdsRecordReplacesItsOwnAndRanksAfterTheKernelsOnTheSameSideOfTheRoute() {
        // Given networkd's record of link 2 (IPv6's route) and, later, the kernel's option on link 3
        var prefixes = AdvertisedNAT64Prefixes()
        let name: (InterfaceIndex) -> String = { "eth\($0.rawValue)" }
        let wellKnown = IPPrefix(IPAddress("64:ff9b::")!, length: 96), other = IPPrefix(IPAddress("2001:db8:64::")!, length: 64)
        XCTAssertTrue(prefixes.replaceNetworkdRecord([(wellKnown, a, 1800)], of: 2, now: 0))
        XCTAssertFalse(prefixes.replaceNetworkdRecord([(wellKnown, a, 2400)], of: 2, now: 600), "a refreshed lifetime only")
        XCTAssertEqual(prefixes.nextExpiry, 2400)
        XCTAssertTrue(prefixes.replaceNetworkdRecord([(wellKnown, a, 100)], of: 2, now: 700), "already over: dropped")
        XCTAssertTrue(prefixes.replaceNetworkdRecord([(wellKnown, a, nil)], of: 2, now: 700), "no end given: RFC 8781's longest")
        XCTAssertEqual(prefixes.nextExpiry, 700 + 65528)
        prefixes.set(option("2001:db8:64::", 64, lifetime: 600), on: 3, router: b, now: 800)
        // Then: the one on the route's link, whoever told
        XCTAssertEqual(prefixes.explanation(ipv6Link: 2, now: 800, linkName: name), [
            "NAT64 prefix: 64:ff9b::/96 (advertised on the link of IPv6's route)",
            "  64:ff9b::/96 from systemd-networkd (RFC 8781) by fe80::a on eth2, 65428 s left",
            "  2001:db8:64::/64 from router advertisement (RFC 8781) by fe80::b on eth3, 600 s left",
        ])
        // Then: off the route, the kernel's first-hand option before networkd's, learned first or not
        XCTAssertEqual(prefixes.explanation(ipv6Link: nil, now: 800, linkName: name).first,
                       "NAT64 prefix: 2001:db8:64::/64 (handed over by the kernel: preferred to systemd-networkd's record)")
        // When networkd's record of link 2 no longer holds it
        XCTAssertTrue(prefixes.replaceNetworkdRecord([(other, nil, 1000)], of: 2, now: 900))
        XCTAssertFalse(prefixes.replaceNetworkdRecord([(other, nil, 1000)], of: 2, now: 901))
        XCTAssertEqual(prefixes.inUse(ipv6Link: 2)?.source, .networkd)
        XCTAssertTrue(prefixes.replaceNetworkdRecord([], of: 2, now: 902))
        XCTAssertEqual(prefixes.inUse(ipv6Link: 2)?.source, .routerAdvertisement)
        XCTAssertFalse(prefixes.replaceNetworkdRecord([], of: 3, now: 903), "the kernel's are not networkd's to replace")
    }
}
