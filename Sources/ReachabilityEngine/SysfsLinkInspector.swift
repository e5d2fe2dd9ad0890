#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore

/// Reads what sysfs says about a link's medium: `DEVTYPE=` from `class/net/IF/uevent` and
/// whether `class/net/IF/wireless` or `class/net/IF/phy80211` exist.
///
/// The root is injectable so tests can fake a WiFi or WWAN link.
public struct SysfsLinkInspector: Sendable {
    /// The sysfs mount point, normally "/sys".
    public var root: String

    /// Creates an inspector reading below `root`.
    public init(root: String = "/sys") {
        self.root = root
    }

    /// The classification facts of link `name`, combining sysfs with netlink's `kind` and
    /// hardware type. Missing files simply contribute nothing.
    public func classificationFacts(name: String, kind: String?, hardwareType: UInt16) -> LinkClassificationFacts {
        let directory = "\(root)/class/net/\(name)"
        return LinkClassificationFacts(
            kind: kind,
            hardwareType: hardwareType,
            deviceType: deviceType(in: directory),
            hasWirelessDirectory: exists("\(directory)/wireless") || exists("\(directory)/phy80211")
        )
    }

    private func deviceType(in directory: String) -> String? {
        guard let uevent = readSmallFile("\(directory)/uevent") else { return nil }
        for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }

    private func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Reads up to 4 KiB of a sysfs attribute file; nil when it cannot be read.
    private func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }
}
