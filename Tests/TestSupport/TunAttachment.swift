import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// This test process attached, as the "VPN client", to a tun device inside a test namespace.
///
/// A tun device has carrier only while a process holds a queue of it open: `ip tuntap add`
/// alone leaves it `NO-CARRIER`. The kernel puts the device of `/dev/net/tun` in the network
/// namespace of the thread that *opens* the file, so a thread inside the namespace
/// (``TestNamespace/runInside(_:)``) opens `/dev/net/tun` and attaches with `TUNSETIFF`; the
/// descriptor stays with the test (close-on-exec, so children such as `ip` never inherit it).
/// Closing it takes the carrier away again.
package final class TunAttachment {
    /// The device's name.
    package let name: String
    private var descriptor: Int32

    /// `TUNSETIFF`, `_IOW('T', 202, int)` (<linux/if_tun.h>; a macro Swift cannot import).
    private static let tunSetInterface: UInt = 0x4004_54CA
    /// `IFF_TUN`: an IP-level device.
    private static let flagTun: Int16 = 0x0001
    /// `IFF_NO_PI`: no packet-information header.
    private static let flagNoPacketInformation: Int16 = 0x1000
    /// `sizeof(struct ifreq)` on Linux: a 16-byte name and a 24-byte union.
    private static let interfaceRequestSize = 40

    /// Attaches to (or creates) tun device `name` in `namespace`.
    ///
    /// - Parameters:
    ///   - name: the device, e.g. `tun0` made by `ip tuntap add dev tun0 mode tun`.
    ///   - namespace: its namespace.
    /// - Throws: `HarnessError` naming the failing call and errno.
    ///
    /// The corresponding C calls are `open("/dev/net/tun")` and `ioctl(TUNSETIFF)`.
    package init(name: String, in namespace: TestNamespace) throws {
        precondition(name.utf8.count < 16, "interface names have at most 15 bytes")
        self.name = name
        descriptor = try namespace.runInside { Self.attach(name) }
    }

    deinit {
        close()
    }

    /// Detaches: the device loses its carrier (and disappears unless it was made persistent).
    /// Harmless when repeated.
    package func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }

    /// Opens `/dev/net/tun` and attaches to `name` (in the calling thread's namespace).
    private static func attach(_ name: String) -> Result<Int32, HarnessError> {
        let tun = open("/dev/net/tun", O_RDWR | O_CLOEXEC)
        guard tun >= 0 else { return .failure(.lastError("open /dev/net/tun")) }
        var request = [UInt8](repeating: 0, count: interfaceRequestSize)
        for (offset, byte) in name.utf8.enumerated() { request[offset] = byte }
        let result = request.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: flagTun | flagNoPacketInformation, toByteOffset: 16, as: Int16.self)  // ifr_flags
            return ioctl(tun, tunSetInterface, bytes.baseAddress!)
        }
        guard result == 0 else {
            let failed = HarnessError.lastError("attach to \(name) (ioctl TUNSETIFF)")
            _ = Glibc.close(tun)
            return .failure(failed)
        }
        return .success(tun)
    }
}

extension DaemonTestCase {
    /// Makes tun0 with `address` in the test namespace, attached by this test (so it has
    /// carrier, until the attachment is closed or the test ends) and up.
    package func attachedTun(address: String = "10.99.0.2/24") throws -> TunAttachment {
        try netns.ip("tuntap", "add", "dev", "tun0", "mode", "tun")
        try netns.setIPv6(enabled: false, on: "tun0")
        let tun = try TunAttachment(name: "tun0", in: try netns)
        addTeardownBlock { tun.close() }
        try netns.ip("link", "set", "tun0", "up")
        try netns.waitForCarrier("tun0")
        try netns.ip("addr", "add", address, "dev", "tun0")
        return tun
    }

    /// Starts the daemon with ra0 made to look like WiFi (an injected sysfs tree) and ra0's
    /// IPv4 address configured, without a default route.
    package func startDaemonOverFakeWiFi() throws {
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("ra0")
        try startDaemon(sysfsRoot: sysfs.root)
        try configureIPv4Link()
    }
}
