@testable import RTNetlink
import ReachabilityCore
import XCTest
@testable import ReachabilityEngine

/// The gateway neighbour evidence: which entries count and how a failure comes and goes.
final class GatewayNeighboursTests: XCTestCase {
    private let gateway = IPAddress("10.77.0.1")!
    private let link: InterfaceIndex = 7

    func testThatAFailedGatewayIsLimitedUntilItResolvesAgain() {
        // Given a followed gateway, then its entry's states in a row (a deletion is not an event here)
        let rows: [(state: NeighbourState, evidence: Connectivity?, changed: Bool, line: UInt)] = [
            (.resolving, nil, false, #line),
            (.failed, .limited, true, #line),
            (.resolving, .limited, false, #line),  // probing again after the failure: still no answer
            (.failed, .limited, false, #line),
            (.resolved, nil, true, #line),
            (.resolved, nil, false, #line),
        ]
        var gateways = GatewayNeighbours()
        XCTAssertEqual(gateways.follow([.ipv4: (gateway, link)]), [.ipv4])
        for row in rows {
            // When
            let changed = gateways.apply(NeighbourMessage(family: 2, index: link, state: row.state, destination: gateway.bytes), linkHasCarrier: true)

            // Then
            XCTAssertEqual(changed, row.changed, "\(row.state)", line: row.line)
            XCTAssertEqual(gateways.current(.ipv4)?.evidence, row.evidence, "\(row.state)", line: row.line)
        }
    }

    func testThatEvidenceIsAboutTheNetworkOnTheLinkWhileItHasCarrier() {
        // Given a followed gateway, then events in a row: its entry's states on a link with or
        // without carrier, and carrier losses
        enum Event { case entry(NeighbourState, carrier: Bool), carrierLost(InterfaceIndex) }
        let rows: [(event: Event, evidence: Connectivity?, changed: Bool, line: UInt)] = [
            (.entry(.failed, carrier: true), .limited, true, #line),
            (.carrierLost(8), .limited, false, #line),  // another link's
            (.carrierLost(link), nil, true, #line),  // the network that comes back may be another
            (.entry(.failed, carrier: false), nil, false, #line),  // nothing could answer
            (.entry(.resolving, carrier: true), nil, false, #line),  // carrier back, probing
            (.entry(.failed, carrier: true), .limited, true, #line),  // that network's own failure
            (.carrierLost(link), nil, true, #line),
            (.carrierLost(link), nil, false, #line),
            (.entry(.resolved, carrier: true), nil, false, #line),
        ]
        var gateways = GatewayNeighbours()
        _ = gateways.follow([.ipv4: (gateway, link)])
        for row in rows {
            // When
            let changed = switch row.event {
            case .entry(let state, let carrier):
                gateways.apply(NeighbourMessage(family: 2, index: link, state: state, destination: gateway.bytes), linkHasCarrier: carrier)
            case .carrierLost(let index): gateways.linkLostCarrier(index)
            }

            // Then
            XCTAssertEqual(changed, row.changed, "\(row.event)", line: row.line)
            XCTAssertEqual(gateways.current(.ipv4)?.evidence, row.evidence, "\(row.event)", line: row.line)
        }
    }

    func testThatAFailedEntryReadWithoutCarrierIsNotCounted() {
        // Given a new gateway on a link without carrier
        var gateways = GatewayNeighbours()
        _ = gateways.follow([.ipv4: (gateway, link)])

        // When its entry is read, failed
        gateways.read(.failed, for: .ipv4, linkHasCarrier: false)

        // Then
        XCTAssertNil(gateways.current(.ipv4)?.evidence)
    }

    func testThatOnlyTheFollowedGatewayOnItsLinkCounts() {
        // Given
        var gateways = GatewayNeighbours()
        _ = gateways.follow([.ipv4: (gateway, link)])

        // When other neighbours fail: another address, the same address on another link, the other family
        XCTAssertFalse(gateways.apply(NeighbourMessage(family: 2, index: link, state: .failed, destination: [10, 77, 0, 9]), linkHasCarrier: true))
        XCTAssertFalse(gateways.apply(NeighbourMessage(family: 2, index: 8, state: .failed, destination: gateway.bytes), linkHasCarrier: true))
        XCTAssertFalse(gateways.apply(NeighbourMessage(family: 10, index: link, state: .failed, destination: gateway.bytes), linkHasCarrier: true))

        // Then
        XCTAssertNil(gateways.current(.ipv4)?.evidence)
    }

    func testThatANewGatewayStartsAfreshAndARecentOneKeepsItsState() {
        // Given a failed gateway
        var gateways = GatewayNeighbours()
        _ = gateways.follow([.ipv4: (gateway, link)])
        gateways.read(.failed, for: .ipv4, linkHasCarrier: true)
        let other = IPAddress("10.77.0.254")!

        // When the route goes (no gateway), comes back, then moves to another gateway
        let gone = gateways.follow([:])
        let evidenceWhileGone = gateways.current(.ipv4)?.evidence
        let back = gateways.follow([.ipv4: (gateway, link)])
        let evidenceBack = gateways.current(.ipv4)?.evidence
        let moved = gateways.follow([.ipv4: (other, link)])

        // Then the returning gateway is known (no read, no new filter) and still failed; the new one starts afresh
        XCTAssertEqual(gone, [])
        XCTAssertNil(evidenceWhileGone)
        XCTAssertEqual(back, [])
        XCTAssertEqual(evidenceBack, .limited)
        XCTAssertEqual(moved, [.ipv4])
        XCTAssertNil(gateways.current(.ipv4)?.evidence)
        XCTAssertEqual(gateways.addresses(of: .ipv4), [gateway, other], "both stay followed")
        // and a recent gateway's entry is still followed while another is chosen
        XCTAssertFalse(gateways.apply(NeighbourMessage(family: 2, index: link, state: .resolved, destination: gateway.bytes), linkHasCarrier: true))
        XCTAssertEqual(gateways.follow([.ipv4: (gateway, link)]), [])
        XCTAssertNil(gateways.current(.ipv4)?.evidence, "it resolved while not chosen")
    }

    func testThatOnlyTheMostRecentGatewaysStayFollowed() {
        // Given more gateways chosen in turn than a family keeps
        var gateways = GatewayNeighbours()
        let addresses = (1...(GatewayNeighbours.capacity + 2)).map { IPAddress("10.77.0.\($0)")! }
        for address in addresses { _ = gateways.follow([.ipv4: (address, link)]) }

        // Then the least recently chosen are forgotten
        XCTAssertEqual(gateways.addresses(of: .ipv4), Array(addresses.suffix(GatewayNeighbours.capacity)))
    }
}
