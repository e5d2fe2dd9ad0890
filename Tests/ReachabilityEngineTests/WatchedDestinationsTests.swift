import ReachabilityEngine
import XCTest

/// The bounded, least-recently-asked set of destinations whose routes the daemon's filter keeps.
final class WatchedDestinationsTests: XCTestCase {
    func testThatANewAddressIsWatchedAndAnAskedOneIsNotNew() {
        // Given
        var watched = WatchedDestinations(capacity: 3)

        // When / Then
        XCTAssertTrue(watched.ask(about: [10, 9, 1, 1]))
        XCTAssertFalse(watched.ask(about: [10, 9, 1, 1]))
        XCTAssertTrue(watched.ask(about: ipv6(1)))
        XCTAssertEqual(watched.ipv4, [[10, 9, 1, 1]])
        XCTAssertEqual(watched.ipv6, [ipv6(1)])
    }

    func testThatTheLeastRecentlyAskedAddressIsForgottenFirst() {
        // Given a full IPv4 set
        var watched = WatchedDestinations(capacity: 3)
        for host: UInt8 in 1...3 { _ = watched.ask(about: [10, 0, 0, host]) }

        // When a fourth address is asked about
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 4]))

        // Then the first one asked is gone, and the one gone is new again
        XCTAssertEqual(watched.ipv4, [[10, 0, 0, 2], [10, 0, 0, 3], [10, 0, 0, 4]])
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 1]))
        XCTAssertEqual(watched.ipv4, [[10, 0, 0, 3], [10, 0, 0, 4], [10, 0, 0, 1]])
    }

    func testThatAskingAgainRefreshesAnAddress() {
        // Given a full set
        var watched = WatchedDestinations(capacity: 3)
        for host: UInt8 in 1...3 { _ = watched.ask(about: [10, 0, 0, host]) }

        // When the oldest is asked about again, then a new one
        XCTAssertFalse(watched.ask(about: [10, 0, 0, 1]))
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 4]))

        // Then the refreshed one stays and the next oldest went
        XCTAssertEqual(watched.ipv4, [[10, 0, 0, 3], [10, 0, 0, 1], [10, 0, 0, 4]])
    }

    func testThatTheFamiliesHaveTheirOwnCap() {
        // Given a full IPv6 set
        var watched = WatchedDestinations(capacity: 2)
        _ = watched.ask(about: ipv6(1))
        _ = watched.ask(about: ipv6(2))

        // When IPv4 addresses come
        _ = watched.ask(about: [10, 0, 0, 1])
        _ = watched.ask(about: [10, 0, 0, 2])

        // Then no IPv6 address was pushed out
        XCTAssertEqual(watched.ipv6, [ipv6(1), ipv6(2)])
        XCTAssertEqual(watched.ipv4, [[10, 0, 0, 1], [10, 0, 0, 2]])
    }

    func testThatTenThousandDistinctAddressesOnlyChurnTheSet() {
        // Given the daemon's cap
        var watched = WatchedDestinations()
        XCTAssertEqual(watched.capacity, 16)

        // When a hostile caller asks about 10,000 distinct addresses of each family
        var new = 0
        for number in 0..<10_000 {
            let bytes = [UInt8(number >> 8), UInt8(number & 0xff)]
            if watched.ask(about: [10, 0] + bytes) { new += 1 }
            if watched.ask(about: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 10) + bytes) { new += 1 }
        }

        // Then every one was new, and the set holds the last 16 of each family
        XCTAssertEqual(new, 20_000)
        XCTAssertEqual(watched.ipv4.count, 16)
        XCTAssertEqual(watched.ipv6.count, 16)
        XCTAssertEqual(watched.ipv4.first, [10, 0, UInt8(9984 >> 8), UInt8(9984 & 0xff)])
        XCTAssertEqual(watched.ipv4.last, [10, 0, UInt8(9999 >> 8), UInt8(9999 & 0xff)])
    }

    private func ipv6(_ host: UInt8) -> [UInt8] {
        [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [host]
    }

    func testThatOnlyRoutesContainingAWatchedAddressAffectTheSet() {
        // Given
        var watched = WatchedDestinations()
        _ = watched.ask(about: [10, 9, 1, 1])

        // When, Then
        XCTAssertTrue(watched.isAffected(byRouteTo: [10, 9, 0, 0], length: 16, family: .ipv4))
        XCTAssertTrue(watched.isAffected(byRouteTo: [10, 9, 1, 1], length: 32, family: .ipv4))
        XCTAssertTrue(watched.isAffected(byRouteTo: nil, length: 0, family: .ipv4), "a default route")
        XCTAssertFalse(watched.isAffected(byRouteTo: [100, 64, 0, 1], length: 32, family: .ipv4))
        XCTAssertFalse(watched.isAffected(byRouteTo: [10, 9, 2, 0], length: 24, family: .ipv4))
        XCTAssertFalse(watched.isAffected(byRouteTo: nil, length: 0, family: .ipv6), "nothing of IPv6 is watched")
    }
}
