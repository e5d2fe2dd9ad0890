#if canImport(Glibc)
import Glibc
#endif
import SystemSupport

/// Replaces the file at `path` with `text` atomically: readers see the old contents or the new,
/// never a part. Writes `path.new` beside it (same directory, so the same file system), then
/// renames it over `path`. A failure leaves `path` as it was.
func replaceFileAtomically(_ path: String, with text: String, mode: mode_t = 0o644) throws(SystemError) {
    let temporary = path + ".new"
    let descriptor = try valueOrErrno("create \(temporary)") { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
    do throws(SystemError) {
        try writeAll(Array(text.utf8), to: descriptor, action: "write \(temporary)")
    } catch {
        close(descriptor)
        unlink(temporary)
        throw error
    }
    close(descriptor)
    do throws(SystemError) {
        try valueOrErrno("rename \(temporary) to \(path)") { rename(temporary, path) }
    } catch {
        unlink(temporary)
        throw error
    }
}
