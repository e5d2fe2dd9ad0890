@testable import RTNetlink
import ReachabilityCore
import ReachabilityEngine
import XCTest

/// The bounded, least-recently-asked sets of destinations (per caller) whose routes the daemon
/// follows. `ipv4`/`ipv6` are every caller's together, sorted.
final class WatchedDestinationsTests: XCTestCase {
    func testThatANewAddressIsWatchedAndAnAskedOneIsNotNew() {
        // Given
        var watched = WatchedDestinations(capacity: 3)

        // When / Then
        XCTAssertTrue(watched.ask(about: [10, 9, 1, 1]))
        XCTAssertFalse(watched.ask(about: [10, 9, 1, 1]))
        XCTAssertTrue(watched.ask(about: ipv6(1)))
        XCTAssertEqual(watched.ipv4Bytes, [[10, 9, 1, 1]])
        XCTAssertEqual(watched.ipv6Bytes, [ipv6(1)])
    }

    func testThatTheLeastRecentlyAskedAddressIsForgottenFirst() {
        // Given a full IPv4 set
        var watched = WatchedDestinations(capacity: 3)
        for host: UInt8 in 1...3 { _ = watched.ask(about: [10, 0, 0, host]) }

        // When a fourth address is asked about
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 4]))

        // Then the first one asked is gone, and the one gone is new again (pushing out the next)
        XCTAssertEqual(watched.ipv4Bytes, [[10, 0, 0, 2], [10, 0, 0, 3], [10, 0, 0, 4]])
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 1]))
        XCTAssertEqual(watched.ipv4Bytes, [[10, 0, 0, 1], [10, 0, 0, 3], [10, 0, 0, 4]])
    }

    func testThatAskingAgainRefreshesAnAddress() {
        // Given a full set
        var watched = WatchedDestinations(capacity: 3)
        for host: UInt8 in 1...3 { _ = watched.ask(about: [10, 0, 0, host]) }

        // When the oldest is asked about again, then a new one
        XCTAssertFalse(watched.ask(about: [10, 0, 0, 1]))
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 4]))

        // Then the refreshed one stays and the next oldest went
        XCTAssertEqual(watched.ipv4Bytes, [[10, 0, 0, 1], [10, 0, 0, 3], [10, 0, 0, 4]])
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
        XCTAssertEqual(watched.ipv6Bytes, [ipv6(1), ipv6(2)])
        XCTAssertEqual(watched.ipv4Bytes, [[10, 0, 0, 1], [10, 0, 0, 2]])
    }

    func testThatAThousandDistinctAddressesOnlyChurnTheSet() {
        // Given the daemon's cap
        var watched = WatchedDestinations()
        XCTAssertEqual(watched.capacity, 16)

        // When a hostile caller asks about 1,000 distinct addresses of each family
        var new = 0
        for number in 0..<1_000 {
            let bytes = [UInt8(number >> 8), UInt8(number & 0xff)]
            if watched.ask(about: [10, 0] + bytes) { new += 1 }
            if watched.ask(about: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 10) + bytes) { new += 1 }
        }

        // Then every one was new, and the set holds the last 16 of each family
        XCTAssertEqual(new, 2_000)
        XCTAssertEqual(watched.ipv4Bytes.count, 16)
        XCTAssertEqual(watched.ipv6Bytes.count, 16)
        XCTAssertEqual(watched.ipv4Bytes.first, [10, 0, UInt8(984 >> 8), UInt8(984 & 0xff)])
        XCTAssertEqual(watched.ipv4Bytes.last, [10, 0, UInt8(999 >> 8), UInt8(999 & 0xff)])
    }

    func testThatACallerOnlyPushesOutItsOwnWatches() {
        // Given root's watch
        var watched = WatchedDestinations()
        XCTAssertTrue(watched.ask(about: [10, 9, 1, 1], caller: CallerShare(connection: ":1.1")))

        // When another caller asks about 16 + 100 other addresses
        for host in 0..<116 { _ = watched.ask(about: [10, 200, 0, UInt8(host)], caller: CallerShare(connection: ":1.2")) }

        // Then root's stays, and the other keeps its last 16
        XCTAssertTrue(watched.ipv4Bytes.contains([10, 9, 1, 1]))
        XCTAssertEqual(watched.ipv4Bytes.count, 17)
        XCTAssertTrue(watched.isAffected(byRouteTo: [10, 9, 0, 0], length: 16, family: .ipv4))

        // When the other caller leaves, its watches go; root's stay
        XCTAssertTrue(watched.forget(caller: ":1.2"))
        XCTAssertEqual(watched.ipv4Bytes, [[10, 9, 1, 1]])
        XCTAssertFalse(watched.forget(caller: ":1.2"), "already gone")
    }

    func testThatAnUnprivilegedUserKeepsHalfTheFilterWhateverItsConnections() {
        // Given a root service watching 8 addresses
        var watched = WatchedDestinations()
        for host: UInt8 in 1...8 { _ = watched.ask(about: [10, 1, 0, host], caller: CallerShare(connection: ":1.1")) }

        // When one user asks about 18 more, from any number of connections (they share one share)
        for host: UInt8 in 1...18 { _ = watched.ask(about: [10, 2, 0, host], caller: CallerShare(user: 1000)) }

        // Then the user keeps its 8 most recent, the service all of its own
        XCTAssertEqual(watched.ipv4Bytes.filter { $0[1] == 2 }, (11...18).map { [10, 2, 0, $0] })
        XCTAssertEqual(watched.ipv4Bytes.filter { $0[1] == 1 }.count, 8)
        // and its last connection leaving takes them all
        XCTAssertTrue(watched.forget(caller: CallerShare(user: 1000).name))
        XCTAssertEqual(watched.ipv4Bytes.count, 8)
    }

    func testThatAnAddressTwoCallersWatchStaysUntilBothLetGo() {
        var watched = WatchedDestinations(capacity: 1)
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 1], caller: CallerShare(connection: "a")))
        XCTAssertFalse(watched.ask(about: [10, 0, 0, 1], caller: CallerShare(connection: "b")), "already watched by a")
        XCTAssertTrue(watched.ask(about: [10, 0, 0, 2], caller: CallerShare(connection: "a")), ".2 is new (a let .1 go, b still has it)")
        XCTAssertEqual(watched.ipv4Bytes, [[10, 0, 0, 1], [10, 0, 0, 2]], "b still watches .1")
        XCTAssertTrue(watched.forget(caller: "b"))
        XCTAssertEqual(watched.ipv4Bytes, [[10, 0, 0, 2]])
    }

    func testThatTheLeastRecentlyAskingCallerGoesBeyondTheCallerCap() {
        var watched = WatchedDestinations(capacity: 1)
        for caller in 0..<WatchedDestinations.callerCapacity {
            _ = watched.ask(about: [10, UInt8(caller >> 8), UInt8(caller & 0xff), 1], caller: CallerShare(connection: ":1.\(caller)"))
        }
        _ = watched.ask(about: [10, 0, 0, 1], caller: CallerShare(connection: ":1.0"))  // the first asks again
        XCTAssertTrue(watched.ask(about: [10, 255, 0, 1], caller: CallerShare(connection: ":1.new")))
        XCTAssertEqual(watched.callerCount, WatchedDestinations.callerCapacity)
        XCTAssertTrue(watched.ipv4Bytes.contains([10, 0, 0, 1]), "the caller that asked again stays")
        XCTAssertFalse(watched.ipv4Bytes.contains([10, 0, 1, 1]), "the least recently asking one went")
    }

    func testThatTheBinarySearchAgreesWithAScanOfEveryAddress() {
        // Given 300 random addresses of each family from a handful of callers
        var generator = SystemRandomNumberGenerator()
        var watched = WatchedDestinations(capacity: 100)
        for index in 0..<300 {
            _ = watched.ask(about: [10, UInt8.random(in: 0...3, using: &generator), UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator)], caller: CallerShare(connection: "\(index % 3)"))
            _ = watched.ask(about: [0x20, 0x01, 0x0d, 0xb8] + (0..<12).map { _ in UInt8.random(in: 0...3, using: &generator) }, caller: CallerShare(connection: "\(index % 3)"))
        }
        // When random prefixes are asked about, Then the answer is what a scan says
        for _ in 0..<500 {
            let family: AddressFamily = Bool.random(using: &generator) ? .ipv4 : .ipv6
            let width = family == .ipv4 ? 4 : 16
            let prefix = family == .ipv4
                ? [10, UInt8.random(in: 0...3, using: &generator), UInt8.random(in: 0...255, using: &generator), 0]
                : [0x20, 0x01, 0x0d, 0xb8] + (0..<12).map { _ in UInt8.random(in: 0...3, using: &generator) }
            let length = UInt8.random(in: 1...UInt8(width * 8), using: &generator)
            let scanned = (family == .ipv4 ? watched.ipv4Bytes : watched.ipv6Bytes).contains { IPAddressBytes.prefix(prefix, length: length, contains: $0) }
            XCTAssertEqual(watched.isAffected(byRouteTo: prefix, length: length, family: family), scanned, "\(prefix)/\(length)")
        }
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

/// The tests speak address bytes; the set speaks ``IPAddress`` and route messages.
extension WatchedDestinations {
    fileprivate mutating func ask(about bytes: [UInt8], caller: CallerShare = CallerShare(connection: "")) -> Bool {
        ask(about: IPAddress(family: bytes.count == 4 ? .ipv4 : .ipv6, bytes: bytes)!, caller: caller)
    }

    fileprivate var ipv4Bytes: [[UInt8]] { ipv4.map(\.bytes) }
    fileprivate var ipv6Bytes: [[UInt8]] { ipv6.map(\.bytes) }

    fileprivate func isAffected(byRouteTo prefix: [UInt8]?, length: UInt8, family: AddressFamily) -> Bool {
        isAffected(byRouteTo: RouteMessage(
            family: family.netlinkFamily, destinationLength: length, table: .main, type: .unicast, scope: 0, flags: [], destination: prefix
        ))
    }
}
