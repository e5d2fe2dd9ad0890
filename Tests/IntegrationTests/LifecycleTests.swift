import Foundation
import ReachabilityCore
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
}
