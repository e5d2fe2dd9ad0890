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

    func testThatLifetimesRefreshWithdrawAndExpireAndLinksTakeTheirOwn() {
        // Given / When / Then, row by row; IPv6's route on link 2
        enum Step {
            case advertise(String, Int, lifetime: UInt32, link: InterfaceIndex, by: IPAddress, at: Double)
            case expire(at: Double)
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
            (.advertise("2001:db8:64::", 64, lifetime: 0, link: 2, by: b, at: 1002), false, "2001:db8:1::/48", 1008, #line),  // not b's prefix now
            (.linkDown(2), true, "2001:db8::/32", 1008, #line),
            (.linkDown(3), true, nil, nil, #line),
        ]
        var prefixes = AdvertisedNAT64Prefixes()
        for row in rows {
            let changed = switch row.step {
            case let .advertise(prefix, length, lifetime, link, router, now):
                prefixes.set(option(prefix, length, lifetime: lifetime), on: link, router: router, now: now)
            case let .expire(now): prefixes.expire(now: now)
            case let .linkDown(link): prefixes.forget(link)
            }
            XCTAssertEqual(changed, row.changed, line: row.line)
            XCTAssertEqual(prefixes.inUse(ipv6Link: 2)?.prefix.description, row.inUse, line: row.line)
            XCTAssertEqual(prefixes.nextExpiry, row.next, line: row.line)
        }
    }

    func testThatARoutersNewPrefixReplacesItsOldOneAndAFloodKeepsABoundedSetWithTheFirstLearned() {
        // Given one router flooding link 2 with a new prefix in each advertisement
        var prefixes = AdvertisedNAT64Prefixes()
        for number in 0..<1000 {
            prefixes.set(option("2001:db8:\(String(number, radix: 16))::", 48, lifetime: 1800), on: 2, router: a, now: Double(number))
        }
        // Then only its last one is kept
        XCTAssertEqual(prefixes.advertisements.map(\.prefix.description), ["2001:db8:3e7::/48"])
        XCTAssertEqual(prefixes.nextExpiry, 999 + 1800)
        // And withdrawing a prefix it no longer advertises changes nothing
        XCTAssertFalse(prefixes.set(option("2001:db8:3e6::", 48, lifetime: 0), on: 2, router: a, now: 1000))

        // When routers fe80::1:0 ... fe80::1:3e7 each advertise a prefix on link 3 (forged sources)
        for number in 0..<1000 {
            let router = IPAddress("fe80::1:\(String(number, radix: 16))")!
            XCTAssertTrue(prefixes.set(option("64:ff9b:\(String(number, radix: 16))::", 96, lifetime: 600), on: 3, router: router, now: 2000 + Double(number)))
        }
        // Then the set holds the capacity: the first learned stay, the last slot holds the last router's
        let kept = prefixes.advertisements
        XCTAssertEqual(kept.count, AdvertisedNAT64Prefixes.advertisedCapacity)
        XCTAssertEqual(kept.map(\.router?.description), ["fe80::a"] + (0..<6).map { "fe80::1:\(String($0, radix: 16))" } + ["fe80::1:3e7"])
        XCTAssertEqual(prefixes.inUse(ipv6Link: 2)?.prefix.description, "2001:db8:3e7::/48")
        XCTAssertEqual(prefixes.inUse(ipv6Link: 3)?.prefix.description, "64:ff9b::/96")
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
