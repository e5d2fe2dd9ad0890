@testable import RTNetlink
import TestSupport
import XCTest

/// Damaged datagrams: the parser must return (never trap), and whatever it returns must agree
/// with an independent reading of the framing and with each message's type.
final class NetlinkParserRobustnessTests: XCTestCase {
    func testThatEveryValidFixtureSatisfiesTheOracle() {
        for fixture in Fixture.all {
            // Given, When
            let results = NetlinkParser.parse(datagram: fixture.bytes)

            // Then
            XCTAssertNil(ParserOracle.inconsistency(of: results, for: fixture.bytes), fixture.name)
            XCTAssertFalse(results.isEmpty, fixture.name)
            for case let .failure(error) in results {
                XCTFail("\(fixture.name): \(error)")
            }
        }
    }

    func testThatRandomMutationsNeitherTrapNorProduceInconsistentResults() {
        // Given: 20,000 mutations, generated up front so that any one is named by its index
        var mutator = Mutator(generator: SplitMix64(seed: 0x5eed_2024_0001), corpus: Fixture.all.map(\.bytes))
        let inputs = (0..<20_000).map { _ in mutator.next() }

        // When: parsed in child processes; a trap ends a child, and the next one resumes after it
        let shared = SharedCounters(count: Slot.inconsistentIndices + Self.maximumRecorded)
        var crashes: [(index: Int, outcome: ForkedChild.Outcome)] = []
        var start = 0
        while start < inputs.count {
            shared[Slot.current] = start
            let outcome = ForkedChild.run {
                for index in start..<inputs.count {
                    shared[Slot.current] = index
                    let results = NetlinkParser.parse(datagram: inputs[index])
                    shared[Slot.parsed] += 1
                    for result in results {
                        shared[Slot.kind(of: result)] += 1
                    }
                    if ParserOracle.inconsistency(of: results, for: inputs[index]) != nil {
                        if shared[Slot.inconsistentCount] < Self.maximumRecorded {
                            shared[Slot.inconsistentIndices + shared[Slot.inconsistentCount]] = index
                        }
                        shared[Slot.inconsistentCount] += 1
                    }
                }
                return 0
            }
            guard outcome != .exited(status: 0) else { break }
            crashes.append((shared[Slot.current], outcome))
            start = shared[Slot.current] + 1
        }

        // Then: every input was parsed or trapped
        XCTAssertEqual(shared[Slot.parsed] + crashes.count, inputs.count, "inputs accounted for")

        // Then: no trap
        for crash in crashes.prefix(5) {
            XCTFail("mutation \(crash.index): parser \(crash.outcome) on \(Wire.hex(inputs[crash.index]))")
        }
        XCTAssertEqual(crashes.count, 0, "mutations that made the parser trap")

        // Then: every result consistent (inputs that did not trap can be parsed here to say why)
        XCTAssertEqual(shared[Slot.inconsistentCount], 0, "mutations with inconsistent results")
        for position in 0..<min(5, shared[Slot.inconsistentCount], Self.maximumRecorded) {
            let input = inputs[shared[Slot.inconsistentIndices + position]]
            let problem = ParserOracle.inconsistency(of: NetlinkParser.parse(datagram: input), for: input) ?? "?"
            XCTFail("mutation \(shared[Slot.inconsistentIndices + position]): \(problem); bytes: \(Wire.hex(input))")
        }

        // Then: the mutations were neither too gentle nor too brutal to reach every outcome
        for (slot, name) in Slot.kindNames.enumerated() {
            XCTAssertGreaterThan(shared[Slot.firstKind + slot], 0, "no mutation produced \(name)")
        }
    }

    func testThatTheMinimumErrorCodeDoesNotTrap() {
        // Given: NLMSG_ERROR whose code is INT32_MIN (0x80000000); its negation does not fit an Int32
        let datagram = Wire.message(
            type: ABI.MessageType.error, sequence: 1, body: Wire.errorBody(Int32.min, answering: Fixture.request(sequence: 1))
        )
        XCTAssertEqual(Array(datagram[16..<20]), [0x00, 0x00, 0x00, 0x80])

        // When: parsed in a child first, so that a trap (as the negation once did) fails this test only
        let outcome = ForkedChild.run {
            NetlinkParser.parse(datagram: datagram).count == 1 ? 0 : 1
        }
        XCTAssertEqual(outcome, .exited(status: 0), "NetlinkParser on \(Wire.hex(datagram))")
        guard outcome == .exited(status: 0) else { return }
        let results = NetlinkParser.parse(datagram: datagram)

        // Then
        XCTAssertEqual(results, [.failure(.invalidErrorCode(Int32.min))])
    }

    private static let maximumRecorded = 64

    /// The layout of the counters shared with the child processes.
    private enum Slot {
        static let current = 0
        static let inconsistentCount = 1
        static let parsed = 2
        static let firstKind = 3
        static let kindNames = [
            "success", "truncatedHeader", "invalidMessageLength", "truncatedPayload", "invalidAttributeLength",
            "invalidAttributeValue", "invalidErrorCode",
        ]
        static let inconsistentIndices = firstKind + kindNames.count

        static func kind(of result: Result<NetlinkMessage, NetlinkParseError>) -> Int {
            switch result {
            case .success: firstKind
            case .failure(.truncatedHeader): firstKind + 1
            case .failure(.invalidMessageLength): firstKind + 2
            case .failure(.truncatedPayload): firstKind + 3
            case .failure(.invalidAttributeLength): firstKind + 4
            case .failure(.invalidAttributeValue): firstKind + 5
            case .failure(.invalidErrorCode): firstKind + 6
            }
        }
    }
}
