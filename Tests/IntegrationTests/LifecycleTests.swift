import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// Start-up and shut-down as a service manager sees them. (Every test's tear-down also checks
/// that SIGTERM ends the daemon with status 0 within 1 s.)
final class LifecycleTests: DaemonTestCase {
    func testSIGINTEndsTheDaemonWithStatusZeroAndFreesTheName() throws {
        // Given
        try startDaemon()
        let daemon = try XCTUnwrap(daemon)

        // When
        let ended = daemon.stop(signal: SIGINT, grace: .seconds(1))

        // Then
        XCTAssertEqual(ended, .exited(0), "reachabilityd must exit 0 within 1 s of SIGINT")
        XCTAssertNil(try busctl.daemonNameOwner(), "\(BusContract.busName) still owned after exit")
    }

    func testGenerationGoesOnAcrossARestart() throws {
        // Given a daemon that has published a few changes
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let before = try XCTUnwrap(try waitForStatus(.reachableViaEthernet).generation)
        XCTAssertGreaterThan(before, 1)

        // When it is stopped and started again (its runtime directory kept, as the unit's
        // RuntimeDirectoryPreserve=yes keeps it)
        XCTAssertEqual(try XCTUnwrap(daemon).stop(signal: SIGTERM, grace: .seconds(1)), .exited(0))
        try startDaemon()

        // Then Generation goes on from where it was
        let after = try XCTUnwrap(try waitForStatus(.reachableViaEthernet).generation)
        XCTAssertGreaterThan(after, before, "Generation must not restart at 0")
    }
}
