import Foundation
import TestSupport
import XCTest

@testable import reachabilityd

/// Replays the check helper wire fuzzer's seed corpus and every committed crasher through the
/// daemon's decoder on each `swift test` (``CheckHelperWireOracle``, the fuzzer's own checks),
/// so that a datagram found once to break it can never come back unnoticed.
final class CheckHelperWireCorpusReplayTests: XCTestCase {
    func testThatEverySeedAndCrasherKeepsTheDecodersInvariants() throws {
        // Given
        let files = try FuzzInputs.replayed("helper-wire")

        for file in files {
            // When the daemon decodes it
            let violations = CheckHelperWireOracle.violations(of: [UInt8](try Data(contentsOf: file)))

            // Then every invariant holds
            XCTAssertEqual(violations, [], file.lastPathComponent)
        }
    }

    func testThatTheSeedsAreWhatTheirNamesSay() throws {
        // Given, When
        let decoded = try FuzzInputs.files(in: "corpus/helper-wire").map { file in
            (file.lastPathComponent, try? CheckHelperMessage(decoding: [UInt8](try Data(contentsOf: file))))
        }

        // Then the forged ones are refused, the others are messages an honest end sends
        for (name, message) in decoded {
            XCTAssertEqual(message == nil, name.hasPrefix("forged-"), name)
        }
    }
}
