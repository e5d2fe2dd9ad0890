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
        guard let path else { return 0 }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        return UInt64(String(decoding: buffer[..<count].filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)) ?? 0
    }

    /// Stores `value`, replacing the file atomically (write a temporary file, rename it over).
    func store(_ value: UInt64) throws(SystemError) {
        guard let path else { return }
        let temporary = path + ".new"
        let descriptor = try valueOrErrno("create \(temporary)") { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        let bytes = Array("\(value)\n".utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count else { throw SystemError(action: "write \(temporary)", errno: written < 0 ? errno : EIO) }
        try valueOrErrno("rename \(temporary) to \(path)") { rename(temporary, path) }
    }
}
