#if canImport(Glibc)
import Glibc
#endif
import SystemSupport

/// Keeps `Generation` monotonic for the boot across restarts: the last published value in
/// `$RUNTIME_DIRECTORY/generation`. systemd sets `$RUNTIME_DIRECTORY` for the unit's
/// `RuntimeDirectory=` (on /run, so the count starts again at 0 after a reboot); without it the
/// count starts at 0 with each start.
struct GenerationFile {
    /// The file, or nil without a runtime directory.
    let path: String?

    /// The file under `runtimeDirectory`, e.g. `$RUNTIME_DIRECTORY`.
    init(runtimeDirectory: String?) {
        path = runtimeDirectory.flatMap { $0.isEmpty ? nil : "\($0)/generation" }
    }

    /// The value stored by the last run; 0 when there is none or it cannot be read.
    func load() -> UInt64 {
        guard let path, let text = readSmallFile(path, limit: 32) else { return 0 }
        return UInt64(text.filter { $0 != "\n" }) ?? 0
    }

    /// Stores `value`, replacing the file atomically.
    func store(_ value: UInt64) throws(SystemError) {
        guard let path else { return }
        try replaceFileAtomically(path, with: "\(value)\n")
    }
}
