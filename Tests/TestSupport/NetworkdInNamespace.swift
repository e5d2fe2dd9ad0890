import Foundation

/// The real systemd-networkd running in a test namespace, as DHCP client of the links a
/// `.network` file names, on the test's private bus: in the private mount namespace `ip netns
/// exec` makes, its state directory (`/run/systemd/netif`, where it saves its leases) and its
/// configuration directory (`/etc/systemd/network`) are the test's own, and `/sys` is read-only,
/// which tells networkd that no udev runs (it then takes links as they are, as in a container).
/// Nothing of the host's networkd state is touched. Stopped at ``stop()`` or `deinit`.
package final class NetworkdInNamespace {
    /// Where networkd is installed (Debian's systemd package).
    package static let binary = "/lib/systemd/systemd-networkd"
    /// networkd's bus name.
    package static let busName = "org.freedesktop.network1"

    /// Where this networkd saves its DHCPv4 leases (`/run/systemd/netif/leases` as it sees it).
    package let leaseDirectory: String
    private let process: ChildProcess
    private let logPath: String

    /// Starts networkd in `namespace` with the `.network` file `network` (as `test.network`).
    ///
    /// - Throws: `XCTSkip`-worthy `HarnessError` when networkd is not installed; `HarnessError`
    ///   when it does not take its bus name.
    package init(namespace: TestNamespace, bus: PrivateBus, directory: TemporaryDirectory, network: String) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else { throw HarnessError("\(Self.binary) is not installed") }
        let state = directory.file("networkd-state"), configuration = directory.file("networkd-configuration")
        leaseDirectory = state + "/leases"
        for path in [state, leaseDirectory, configuration] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        // (networkd drops to its own user, which must own its state and reach the bus's socket.)
        for path in [state, leaseDirectory] {
            try FileManager.default.setAttributes([.ownerAccountName: "systemd-network", .groupOwnerAccountName: "systemd-network"], ofItemAtPath: path)
        }
        let busDirectory = (bus.socketPath as NSString).deletingLastPathComponent
        try FileManager.default.setAttributes([.posixPermissions: 0o711], ofItemAtPath: busDirectory)
        try network.write(toFile: configuration + "/test.network", atomically: true, encoding: .utf8)
        try bus.allowStandIn(for: Self.busName, user: "systemd-network")
        logPath = directory.file("networkd.log")
        let script = "mount -o remount,ro /sys && mount --bind \"$1\" /run/systemd/netif && mount --bind \"$2\" /etc/systemd/network && exec \"$3\""
        process = try ChildProcess(
            "ip", ["netns", "exec", namespace.name, "sh", "-c", script, "sh", state, configuration, Self.binary],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "SYSTEMD_LOG_LEVEL": "debug"], standardOutput: logPath, standardError: logPath
        )
        let process = process, logPath = logPath
        try Poll.until("systemd-networkd to take its bus name", timeout: .seconds(20), observe: { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }) { log in
            if let ended = process.poll() { throw HarnessError("systemd-networkd ended (\(ended)): \(log)") }
            return log.contains("Successfully acquired requested service name")
        }
    }

    deinit {
        stop()
    }

    /// What networkd logged so far.
    package var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Stops networkd (SIGTERM).
    package func stop() {
        _ = process.terminate()
    }
}
