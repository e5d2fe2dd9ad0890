#if canImport(Glibc)
import Glibc
#endif
import SystemSupport

/// A small file in `$RUNTIME_DIRECTORY` that keeps what must survive a restart within the boot
/// (`Generation`, the metrics' counters). systemd sets `$RUNTIME_DIRECTORY` for the unit's
/// `RuntimeDirectory=` (on /run, so it starts empty after a reboot); without it nothing is kept
/// and each start begins anew.
struct RuntimeFile {
    /// The file, or nil without a runtime directory.
    let path: String?

    /// `name` under `runtimeDirectory`, e.g. `$RUNTIME_DIRECTORY`.
    init(_ name: String, runtimeDirectory: String?) {
        path = runtimeDirectory.flatMap { $0.isEmpty ? nil : "\($0)/\(name)" }
    }

    /// The text stored by the last run; nil when there is none or it cannot be read.
    func load(limit: Int) -> String? {
        guard let path else { return nil }
        return readSmallFile(path, limit: limit)
    }

    /// Stores `text`, replacing the file atomically.
    func store(_ text: String) throws(SystemError) {
        guard let path else { return }
        try replaceFileAtomically(path, with: text)
    }
}
