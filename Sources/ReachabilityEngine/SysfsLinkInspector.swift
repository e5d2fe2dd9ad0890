#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore

/// Reads what sysfs says about a link's medium: `DEVTYPE=` from `class/net/IF/uevent`,
/// whether `class/net/IF/wireless` or `class/net/IF/phy80211` exist, and the driver.
///
/// The root is injectable so tests can fake a WiFi or WWAN link.
package struct SysfsLinkInspector: Sendable, Hashable {
    /// The sysfs mount point, normally "/sys".
    package var root: String

    /// Creates an inspector reading below `root`.
    package init(root: String = "/sys") {
        self.root = root
    }

    /// What sysfs says about link `name`.
    package struct LinkAttributes: Sendable, Hashable {
        /// `DEVTYPE=` from uevent.
        package var deviceType: String?
        /// `wireless` or `phy80211` exists.
        package var hasWirelessDirectory: Bool
        /// The driver's name (basename of the `device/driver` link).
        package var driver: String?
    }

    /// Reads the attributes of link `name`; missing files simply contribute nothing.
    package func attributes(ofLink name: String) -> LinkAttributes {
        let directory = "\(root)/class/net/\(name)"
        return LinkAttributes(
            deviceType: deviceType(in: directory),
            hasWirelessDirectory: exists("\(directory)/wireless") || exists("\(directory)/phy80211"),
            driver: linkTarget("\(directory)/device/driver").map { String($0.split(separator: "/").last ?? "") }
        )
    }

    private func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
