import Foundation
import TestSupport
import XCTest

/// The daemon's mirror of links and addresses (what `Explain()` lists) against the kernel's
/// own (`ip address`), through the soak's random churn with a receive buffer so small that the
/// kernel overruns it again and again, so that every resynchronisation is checked too (issue
/// 11.1: the soak once found IPv6 addresses the daemon had lost). Not tied to a seed: each run
/// draws a new one and prints it (`REACHABILITYD_SOAK_SEED=N` replays it).
final class AddressMirrorTests: DaemonTestCase {
    /// How long the churn runs.
    private let churnDuration: Duration = .seconds(20)
    /// How long the mirror may take to agree after a cycle before it is wrong rather than late.
    private let patience: Duration = .seconds(3)

    func testMirrorMatchesTheKernelThroughChurnAndOverruns() throws {
        // Given the soak's three links with IPv6, and the daemon with the smallest receive buffer
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["REACHABILITYD_SOAK_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: .min ... .max)
        print("FIGURE: address mirror: seed \(seed) (REACHABILITYD_SOAK_SEED=\(seed) replays the churn)")
        let netns = try netns
        try ChurnBurst.configureLinks(in: netns)
        for link in SoakLink.all {
            try netns.setIPv6(enabled: true, on: link.name)
            try netns.setIPv6(enabled: true, on: link.peer)
        }
        try startDaemon(arguments: ["--log-level", "info", "--receive-buffer", "4096"])
        let daemon = try XCTUnwrap(daemon)
        daemon.drainNotificationsInBackground()
        let batchFile = try XCTUnwrap(directory).file("churn.batch")

        // When the churn runs, stopping after each cycle until the mirror agrees
        var churn = SoakChurn(seed: seed)
        var recent: [String] = []
        var cycles = 0
        let started = ContinuousClock.now
        while ContinuousClock.now - started < churnDuration {
            cycles += 1
            for (batches, pause) in churn.nextCycle() {
                Thread.sleep(forTimeInterval: pause.timeInterval)
                for batch in batches {
                    try (batch.lines.joined(separator: "\n") + "\n").write(toFile: batchFile, atomically: false, encoding: .utf8)
                    _ = try Command.run("ip", ["-n", netns.name] + batch.options + ["-force", "-batch", batchFile])
                    recent = Array((recent + batch.lines.filter { !$0.contains(" dev lo") || $0.hasPrefix("address") }).suffix(30))
                }
            }
            // Then the daemon's addresses are the kernel's
            let deadline = ContinuousClock.now + patience
            var kernel = try Self.kernelAddresses(in: netns)
            var mirror = try Self.mirroredAddresses(explain: try busctl.explain())
            while kernel != mirror, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                kernel = try Self.kernelAddresses(in: netns)
                mirror = try Self.mirroredAddresses(explain: try busctl.explain())
            }
            guard kernel == mirror else {
                XCTFail("cycle \(cycles): the kernel has\n\(kernel.joined(separator: "\n"))\nthe daemon\n\(mirror.joined(separator: "\n"))\nafter\n\(recent.joined(separator: "\n"))")
                return
            }
        }

        // And the kernel did overrun the daemon's queue, so resynchronisations were checked
        XCTAssertNil(daemon.termination, "the daemon exited")
        let overruns = FaultInjection.occurrences(of: "overrun, resynchronising", in: daemon.log)
        XCTAssertGreaterThan(overruns, 0, "no overrun: the resynchronisation went unchecked")
        print("FIGURE: address mirror: \(cycles) cycles in \(churnDuration), \(overruns) overruns, mirror equal to the kernel after each")
    }

    /// `LINK ADDRESS/PREFIX` for every address off `lo`, with ` T` when tentative or DAD-failed
    /// and ` L` when not of global scope, sorted.
    private static func kernelAddresses(in namespace: TestNamespace) throws -> [String] {
        try namespace.ip("-o", "address", "show").split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard fields.count > 3, fields[1] != "lo" else { return nil }
            let address = fields[4] == "peer" ? "\(fields[3])/\(fields[5].split(separator: "/").last ?? "")" : fields[3]
            let mark = !fields.contains("global") ? " L" : fields.contains("tentative") || fields.contains("dadfailed") ? " T" : ""
            return "\(fields[1]) \(address)\(mark)"
        }.sorted()
    }

    /// The same from `Explain()`'s link listing (`  ra0 (index 3): ...` then
    /// `    addresses: 10.77.0.2/24, fe80::1/64 (not usable: not global scope)`).
    private static func mirroredAddresses(explain: String) throws -> [String] {
        var link = ""
        var addresses: [String] = []
        for line in explain.split(separator: "\n") {
            if line.hasPrefix("  "), !line.hasPrefix("    "), let name = line.split(separator: " ").first { link = String(name) }
            guard line.hasPrefix("    addresses: "), link != "lo" else { continue }
            let listing = line.dropFirst("    addresses: ".count)
            guard listing != "none" else { continue }
            for entry in listing.components(separatedBy: ", ") {
                let address = entry.split(separator: " ").first.map(String.init) ?? entry
                let mark = entry.contains("not global scope") ? " L" : entry.contains("not usable") ? " T" : ""
                addresses.append("\(link) \(address)\(mark)")
            }
        }
        return addresses.sorted()
    }
}
