#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Follows what a path names, as resolvconf, NetworkManager and systemd-resolved change it: calls
/// back when the file may have changed — written in place, replaced by a rename, created or
/// deleted, or a symbolic link on the way re-pointed (`/etc/resolv.conf` →
/// `/run/systemd/resolve/stub-resolv.conf`), including directories that appear later
/// (`/run/systemd/resolve/` before resolved starts). The caller reads the file again and
/// compares: a call back says only that it may differ.
///
/// With inotify (`inotify_init1`, `inotify_add_watch`) on a Dispatch read source: each directory
/// on the path's chain of symbolic links is watched for the one name in it that matters (the
/// nearest existing ancestor, while a directory is missing), and the file at the end of the
/// chain itself, so that a write through another path to it (a bind mount's) is seen too. A
/// path that names a directory is followed with its entries: a file in it written, renamed in or
/// out, or deleted calls back too. After every change the watches follow the chain anew. Confined to `queue`; the call back runs there.
package final class FollowedPath: @unchecked Sendable {
    /// The path as given.
    package let path: String
    private let queue: DispatchQueue
    private let onChange: () -> Void
    private let descriptor: Int32
    private let source: DescriptorReadSource
    /// The names that matter in each watched directory, by watch descriptor; the file at the
    /// end of the chain is watched under the empty name.
    private var names: [Int32: Set<String>] = [:]

    /// The events of a watched directory that may change what a name in it leads to.
    private static let directoryEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ONLYDIR)
    /// The events of the file at the end of the chain that change its contents; for a
    /// directory, its entries' (a file's inotify never reports the moves and deletions).
    private static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
    /// The most symbolic links followed, as the kernel's own limit for a path (`MAXSYMLINKS`).
    private static let maximumLinks = 40

    /// Creates a follower of `path` calling `onChange` on `queue`; nothing is watched before
    /// ``start()``.
    ///
    /// - Throws: ``SystemError`` when no inotify instance can be made (the per-user limit).
    package init(path: String, queue: DispatchQueue, onChange: @escaping () -> Void) throws(SystemError) {
        self.path = path
        self.queue = queue
        self.onChange = onChange
        let descriptor = try valueOrErrno("create an inotify instance for \(path)") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        self.descriptor = descriptor
        source = DescriptorReadSource(descriptor: descriptor, queue: queue) { close(descriptor) }
    }

    /// Watches the chain as it is now and starts calling back.
    package func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        watchChain()
        source.start { [weak self] in self?.drain() }
    }

    /// Stops: no call back runs after this returns (called on the queue the call backs run on).
    package func cancel() {
        source.cancel()
    }

    /// The paths the chain passes through: `path`, then each symbolic link's target, as far as
    /// they exist.
    static func chain(of path: String) -> [String] {
        var chain = [path]
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        while chain.count <= maximumLinks {
            let current = chain[chain.count - 1]
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length > 0 else { break }
            let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            chain.append(target.hasPrefix("/") ? target : directory(of: current) + "/" + target)
        }
        return chain
    }

    /// The directory part of `path` ("/" for a name in the root, "." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Watches what the chain passes through now. A watch kept keeps its descriptor (the kernel
    /// hands the same one for the same inode); those no longer needed are removed, and the
    /// `IN_IGNORED` each removal queues is then not ours to follow.
    private func watchChain() {
        var wanted: [Int32: Set<String>] = [:]
        let chain = Self.chain(of: path)
        for link in chain {
            if let (watch, name) = watchNearestDirectory(of: link) { wanted[watch, default: []].insert(name) }
        }
        // The file itself: a write through another path (a bind mount of it) reaches its inode only.
        if let file = chain.last {
            let watch = inotify_add_watch(descriptor, file, Self.fileEvents)
            if watch >= 0 { wanted[watch, default: []].insert("") }
        }
        for watch in names.keys where wanted[watch] == nil { inotify_rm_watch(descriptor, watch) }
        names = wanted
    }

    /// Watches the directory holding `path` for its name; while that directory is missing, its
    /// nearest existing ancestor for the name of the missing component. Returns the watch and
    /// the name, nil when nothing could be watched.
    private func watchNearestDirectory(of path: String) -> (Int32, String)? {
        var name = String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        var directory = Self.directory(of: path)
        while true {
            let watch = inotify_add_watch(descriptor, directory, Self.directoryEvents)
            if watch >= 0 { return (watch, name) }
            guard errno == ENOENT || errno == ENOTDIR, directory != "/", directory != "." else { return nil }
            name = String(directory[directory.index(after: directory.lastIndex(of: "/")!)...])
            directory = Self.directory(of: directory)
        }
    }

    /// Reads every queued event; when one concerns a name that matters (or the queue overflowed,
    /// or a watch went), follows the chain anew and calls back once.
    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var changed = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                // struct inotify_event: wd, mask, cookie, len, then len bytes of NUL-padded name.
                let (watch, mask, length) = buffer.withUnsafeBytes {
                    ($0.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                     $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                // A name that matters in a directory, the file itself (no name) or an entry of the
                // directory at the end of the chain, a watch the kernel dropped (its inode gone),
                // or events lost.
                if let wanted = names[watch], wanted.contains(name) || wanted.contains("") || mask & UInt32(IN_IGNORED) != 0 { changed = true }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 { changed = true }
                offset += 16 + length
            }
        }
        guard changed else { return }
        watchChain()
        onChange()
    }
}
