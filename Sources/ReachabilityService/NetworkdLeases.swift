#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
import SystemSupport

/// The DHCPv4 leases systemd-networkd holds, as it saves them (`/run/systemd/netif/leases/IFINDEX`,
/// one file per link, replaced by a rename at each new lease and removed with the lease): which
/// links' leases carry ANDROID_METERED in option 43 (``NetworkdLease``). networkd's D-Bus
/// `Describe()` does not give the vendor option; the file does. The directory is followed
/// (``FollowedPath``, also when it appears later: networkd starts after the daemon) and read
/// again whole at every change. Confined to the daemon's queue.
public final class NetworkdLeases {
    /// Where networkd saves its DHCPv4 leases.
    public static let defaultDirectory = "/run/systemd/netif/leases"
    private let directory: String
    private let queue: DispatchQueue
    private let record: (Set<InterfaceIndex>) -> Void
    private var followed: FollowedPath?

    /// - Parameters:
    ///   - directory: networkd's lease directory (tests name another).
    ///   - queue: the daemon's queue.
    ///   - record: takes, on the queue, the links whose lease carries ANDROID_METERED, after
    ///     every read.
    public init(directory: String = defaultDirectory, queue: DispatchQueue, record: @escaping (Set<InterfaceIndex>) -> Void) {
        self.directory = directory
        self.queue = queue
        self.record = record
    }

    /// Reads the leases and follows the directory; without inotify the leases are read once,
    /// with a warning.
    public func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        do {
            let followed = try FollowedPath(path: directory, queue: queue) { [weak self] in self?.read() }
            followed.start()
            self.followed = followed
        } catch {
            Log.warning("\(error); DHCP's ANDROID_METERED in systemd-networkd's leases is read once.")
        }
        read()
    }

    /// Stops following the directory.
    public func stop() {
        followed?.cancel()
        followed = nil
    }

    /// Reads every lease file (named by a link index) and records the metered ones.
    private func read() {
        var metered: Set<InterfaceIndex> = []
        for name in Self.entries(of: directory) {
            guard let index = Int32(name), index > 0, let text = readSmallFile("\(directory)/\(name)") else { continue }
            if NetworkdLease.isAndroidMetered(leaseFile: text) { metered.insert(InterfaceIndex(index)) }
        }
        record(metered)
    }

    /// The names in `directory`; none when it cannot be read (networkd not running).
    private static func entries(of directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
