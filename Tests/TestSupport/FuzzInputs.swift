import Foundation

/// The committed fuzzing inputs under `Tests/Fuzz/`: seed corpora and crashers. Shared by the
/// replay tests of RTNetlinkTests, ReachabilityEngineTests and ReachabilityDaemonTests.
package enum FuzzInputs {
    /// `Tests/Fuzz/` in the repository.
    package static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// What a replay test runs for the fuzzer of `target` ("netlink", "reducer", "helper-wire"):
    /// its seeds (`corpus/target`), then its crashers (`crashers/target`).
    ///
    /// - Throws: `HarnessError` when there is no seed, or when a folder cannot be listed.
    package static func replayed(_ target: String) throws -> [URL] {
        let seeds = try files(in: "corpus/\(target)")
        guard !seeds.isEmpty else { throw HarnessError("no seed corpus under \(directory.path)/corpus/\(target)") }
        return seeds + (try files(in: "crashers/\(target)"))
    }

    /// The files of `Tests/Fuzz/subdirectory`, sorted by path; none when it does not exist.
    package static func files(in subdirectory: String) throws -> [URL] {
        let folder = directory.appendingPathComponent(subdirectory)
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.path < $1.path }
    }
}
