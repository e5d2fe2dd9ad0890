import ReachabilityBus
import ReachabilityCore
import XCTest
@testable import ReachabilityService

/// What systemd-resolved's `ResolveHostname` reply comes to for RFC 7050's lookup: its errors
/// are lookups that found nothing, and only a resolved that does not run names a remedy.
final class ResolvedAddressLookupTests: XCTestCase {
    func testThatRepliesBecomeAnswers() throws {
        let synthesized = try XCTUnwrap(IPAddress("64:ff9b::c000:aa"))
        let rows: [(given: Result<[IPAddress], BusError>, then: IPv6AddressLookupAnswer, line: UInt)] = [
            (.success([synthesized]), .addresses([synthesized]), #line),
            (.success([]), .failed(reason: "systemd-resolved found no IPv6 address", remedy: nil), #line),
            (.failure(BusError(name: "org.freedesktop.resolve1.NoSuchRR", message: "no AAAA")),
             .failed(reason: "systemd-resolved: org.freedesktop.resolve1.NoSuchRR: no AAAA", remedy: nil), #line),
            (.failure(BusError(name: "org.freedesktop.resolve1.DnssecFailed", message: "")),
             .failed(reason: "systemd-resolved: org.freedesktop.resolve1.DnssecFailed", remedy: nil), #line),
            (.failure(BusError(name: "org.freedesktop.DBus.Error.NoReply", message: "timed out")),
             .failed(reason: "systemd-resolved: org.freedesktop.DBus.Error.NoReply: timed out", remedy: nil), #line),
            (.failure(BusError(name: BusError.nameHasNoOwner, message: "gone")),
             .failed(reason: "systemd-resolved: \(BusError.nameHasNoOwner): gone", remedy: ResolvedAddressLookup.remedy), #line),
            (.failure(BusError(name: BusError.serviceUnknown, message: "")),
             .failed(reason: "systemd-resolved: \(BusError.serviceUnknown)", remedy: ResolvedAddressLookup.remedy), #line),
        ]
        for row in rows {
            // Given resolved's reply; When it is read; Then
            XCTAssertEqual(ResolvedAddressLookup.answer(row.given), row.then, line: row.line)
        }
    }
}
