import Foundation
import RTNetlink
import ReachabilityCore
import TestSupport
import XCTest

/// Replays the status reducer's seed corpus and every committed crasher through
/// ``StatusReducerOracle`` on each `swift test`, with the fuzzer's invariants.
final class StatusReducerCorpusReplayTests: XCTestCase {
    private func run(_ file: URL) throws -> (input: ReducerFuzzInput, outcome: StatusReducerOracle.Outcome) {
        let input = [UInt8](try Data(contentsOf: file)).withUnsafeBytes { ReducerFuzzInput($0) }
        return (input, StatusReducerOracle.run(input))
    }

    func testThatEverySeedAndCrasherKeepsTheReducersInvariants() throws {
        // Given
        let files = try FuzzInputs.replayed("reducer")

        for file in files {
            // When
            let outcome = try run(file).outcome

            // Then
            XCTAssertEqual(outcome.violations, [], file.lastPathComponent)
        }
    }

    func testThatTheSeedsAreRealKernelMessagesThatParse() throws {
        // Given, When
        var failures: [String] = []
        for file in try FuzzInputs.files(in: "corpus/reducer") {
            for record in try run(file).input.records {
                for case .failure(let error) in NetlinkParser.parse(datagram: record.datagram) {
                    failures.append("\(file.lastPathComponent): \(error)")
                }
            }
        }

        // Then
        XCTAssertEqual(failures, [], "the seed corpus holds real kernel messages: each must parse")
    }

    func testThatTheSeedsReachEveryStatusTheCaptureCanProduce() throws {
        // Given, When
        var statuses: Set<ReachabilityStatus> = []
        for file in try FuzzInputs.files(in: "corpus/reducer") {
            statuses.formUnion(try run(file).outcome.snapshots.map(\.status))
        }

        // Then: the captured namespace is reachable over its veth (Ethernet) and, once its
        // default routes are gone, not reachable
        XCTAssertEqual(statuses, [.reachableViaEthernet, .notReachable])
    }

    func testThatTheWholeCaptureGivesWhatTheNamespaceWasThrough() throws {
        // Given: the longest seed, the whole capture of scripts/fuzz/capture-corpus.py in order
        let runs = try FuzzInputs.files(in: "corpus/reducer").map { try run($0) }
        let whole = try XCTUnwrap(runs.max { $0.input.records.count < $1.input.records.count })

        // When: consecutive equal snapshots taken as one
        var published: [ReachabilitySnapshot] = []
        for snapshot in whole.outcome.snapshots where snapshot != published.last {
            published.append(snapshot)
        }

        // Then
        let expected: [(status: ReachabilityStatus, interface: String, reason: String)] = [
            (.reachableViaEthernet, "fz0", "default route via 10.88.0.1 on fz0 (ethernet), table main, metric 100"),
            (.notReachable, "", "fz0 has no carrier"),  // fz1, its veth peer, down
            (.reachableViaEthernet, "fz0", "default route via 10.88.0.1 on fz0 (ethernet), table main, metric 100"),
            (.reachableViaEthernet, "fz0", "default route via 10.88.0.3 on fz0 (ethernet), table main, metric 100"),
            // Then fzbr0, a bridge whose only port is a veth (a container bridge, ignored), takes
            // the IPv4 default route: IPv6 over fz0 answers
            (.reachableViaEthernet, "fz0", "IPv6 default route via 2001:db8:88::1 on fz0 (ethernet), table main, metric 1024"),
            (.notReachable, "", "no default route"),
        ]
        XCTAssertEqual(published.map { "\($0.status.rawValue) '\($0.interface)': \($0.reason)" }, expected.map { "\($0.status.rawValue) '\($0.interface)': \($0.reason)" })
    }
}
