import Foundation
@testable import RTNetlink
import TestSupport
import XCTest

/// Replays the fuzzing seed corpus and every committed crasher through the parser on each
/// `swift test`, so a crash found once can never come back unnoticed.
final class FuzzCorpusReplayTests: XCTestCase {
    func testThatEverySeedAndCrasherParsesTheSameTwiceWithoutTrapping() throws {
        // Given
        let files = try FuzzInputs.replayed("netlink")

        for file in files {
            // When
            let bytes = [UInt8](try Data(contentsOf: file))
            let first = NetlinkParser.parse(datagram: bytes)
            let second = NetlinkParser.parse(datagram: bytes)

            // Then: deterministic, and a framing error can only be the last result
            XCTAssertEqual(first, second, file.lastPathComponent)
            for result in first.dropLast() {
                if case .failure(.truncatedHeader) = result { XCTFail("framing error before the end: \(file.lastPathComponent)") }
                if case .failure(.invalidMessageLength) = result { XCTFail("framing error before the end: \(file.lastPathComponent)") }
            }
        }
    }

    func testThatTheSeedsAreRealKernelMessagesThatParse() throws {
        // Given, When
        let failures = try FuzzInputs.files(in: "corpus/netlink").flatMap { file in
            NetlinkParser.parse(datagram: [UInt8](try Data(contentsOf: file))).compactMap { result -> String? in
                if case .failure(let error) = result { return "\(file.lastPathComponent): \(error)" }
                return nil
            }
        }

        // Then
        XCTAssertEqual(failures, [], "the seed corpus holds real kernel messages: each must parse")
    }
}
