#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import XCTest

/// Whether the kernel's answer for a probe may still show a removal the events announced
/// (``AnnouncedRemovals``): then the engine asks again.
final class AnnouncedRemovalsTests: XCTestCase {
    private static let ra0: InterfaceIndex = 3
    private static let rb0: InterfaceIndex = 5
    private static let gatewayA = IPAddress("10.77.0.1")!
    private static let sourceA = IPAddress("10.77.0.2")!

    /// The default route via ra0 with metric 100 (as `RTM_DELROUTE` names it).
    private static let defaultViaRA0 = AnnouncedRemovals.Route(prefix: nil, table: .main, metric: 100, outputLink: ra0, gateway: gatewayA, type: .unicast)

    /// The kernel's answer through `link` with `metric`.
    private static func answer(via link: InterfaceIndex = ra0, metric: UInt32 = 100, gateway: IPAddress? = gatewayA, prefix: String? = nil) -> RouteLookup {
        .route(RouteFacts(type: .unicast, outputInterfaceIndex: link, gateway: gateway, matchedPrefix: prefix, metric: metric))
    }

    private static let upWithAddress = AnnouncedRemovals.OutputLink(isUp: true, holdsAddressOfFamily: true)

    struct Row {
        var name: String
        var removals: AnnouncedRemovals
        var lookup: RouteLookup
        var source: IPAddress?
        var family: AddressFamily
        var outputLink: AnnouncedRemovals.OutputLink?
        var mayPredate: Bool
        var line: UInt

        init(
            _ name: String, _ removals: AnnouncedRemovals, _ lookup: RouteLookup, source: IPAddress? = sourceA, family: AddressFamily = .ipv4,
            outputLink: AnnouncedRemovals.OutputLink? = upWithAddress, _ mayPredate: Bool, line: UInt = #line
        ) {
            self.name = name
            self.removals = removals
            self.lookup = lookup
            self.source = source
            self.family = family
            self.outputLink = outputLink
            self.mayPredate = mayPredate
            self.line = line
        }
    }

    private static func removals(_ build: (inout AnnouncedRemovals) -> Void) -> AnnouncedRemovals {
        var removals = AnnouncedRemovals()
        build(&removals)
        return removals
    }

    static let rows: [Row] = {
        let deleted = removals { $0.routeDeleted(defaultViaRA0) }
        let blocker = AnnouncedRemovals.Route(prefix: "8.8.8.0/24", table: .main, metric: 0, outputLink: nil, gateway: nil, type: .unreachable)
        return [
            // Nothing announced: only a route out of a link the mirror has down or lacks.
            Row("nothing announced, the route out of an up link", AnnouncedRemovals(), answer(), false),
            Row("nothing announced, no route", AnnouncedRemovals(), .failed(errno: Errno(ENETUNREACH)), false),
            Row(
                "the route out of a link announced down (its routes are flushed after the message)", AnnouncedRemovals(), answer(),
                outputLink: .init(isUp: false, holdsAddressOfFamily: true), true
            ),
            Row("the route out of a link the mirror lacks (deleted)", AnnouncedRemovals(), answer(), outputLink: nil, true),

            // A route announced deleted (RTM_DELROUTE comes before the kernel unlinks it).
            Row("the answer is the deleted route (the soak's ra0 metric 100)", deleted, answer(), true),
            Row("the answer is the next route, via rb0", deleted, answer(via: rb0, metric: 301, gateway: IPAddress("10.78.0.1")!), false),
            Row("the answer is another metric on the same link", deleted, answer(metric: 200), false),
            Row("the answer is a longer prefix on the same link", deleted, answer(prefix: "8.0.0.0/8"), false),
            Row("no route left", deleted, .failed(errno: Errno(ENETUNREACH)), false),
            Row("the deleted route was added again", removals { $0.routeDeleted(defaultViaRA0); $0.routeAdded(defaultViaRA0) }, answer(), false),
            Row(
                "a route of a nexthop object (no link in the message): prefix, table and metric tell it",
                removals { $0.routeDeleted(.init(prefix: nil, table: .main, metric: 100, outputLink: nil, gateway: nil, type: .unicast)) }, answer(), true
            ),

            // A blocking route announced deleted: an error answer may still come from it.
            Row("an error while an unreachable route was announced deleted", removals { $0.routeDeleted(blocker) }, .failed(errno: Errno(EHOSTUNREACH)), true),
            Row("a route while an unreachable route was announced deleted", removals { $0.routeDeleted(blocker) }, answer(), false),
            Row("no route (another error) while an unreachable route was announced deleted", removals { $0.routeDeleted(blocker) }, .failed(errno: Errno(ENETUNREACH)), false),

            // An address announced deleted.
            Row(
                "the source is the deleted address (a route's src hint, flushed after the message)",
                removals { $0.addressDeleted(.init(address: sourceA, link: ra0)) }, answer(), outputLink: upWithAddress, true
            ),
            Row(
                "IPv4: the route goes out of a link that lost its last address (its routes are flushed)",
                removals { $0.addressDeleted(.init(address: IPAddress("10.77.1.2")!, link: ra0)) }, answer(),
                outputLink: .init(isUp: true, holdsAddressOfFamily: false), true
            ),
            Row(
                "IPv4: the link still holds an address",
                removals { $0.addressDeleted(.init(address: IPAddress("10.77.1.2")!, link: ra0)) }, answer(), false
            ),
            Row(
                "IPv6: a link without addresses keeps its routes",
                removals { $0.addressDeleted(.init(address: IPAddress("2001:db8:77::2")!, link: ra0)) },
                answer(gateway: IPAddress("2001:db8:77::1")!), source: IPAddress("2001:db8:ee::77")!, family: .ipv6,
                outputLink: .init(isUp: true, holdsAddressOfFamily: false), false
            ),
            Row("the deleted address was added again", removals { $0.addressDeleted(.init(address: sourceA, link: ra0)); $0.addressAdded(.init(address: sourceA, link: ra0)) }, answer(), false),
        ]
    }()

    func testWhichAnswersMayPredateAnAnnouncedRemoval() {
        for row in Self.rows {
            // Given the removals announced, When the kernel answers, Then the rule says whether to ask again
            let verdict = row.removals.mayPredateRemoval(lookup: row.lookup, source: row.source, family: row.family, outputLink: row.outputLink)
            XCTAssertEqual(verdict, row.mayPredate, row.name, line: row.line)
        }
    }
}
