import Foundation

/// The committed fuzzing inputs under `Tests/Fuzz/`: seed corpora and crashers. Shared by the
/// replay tests of RTNetlinkTests and ReachabilityEngineTests.
package enum FuzzInputs {
    /// `Tests/Fuzz/` in the repository.
    package static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The files of `Tests/Fuzz/subdirectory`, sorted by path; none when it does not exist.
    package static func files(in subdirectory: String) throws -> [URL] {
        let folder = directory.appendingPathComponent(subdirectory)
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.path < $1.path }
    }
}
