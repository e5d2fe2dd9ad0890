import Foundation
import ReachabilityCore
import XCTest

extension TestNamespace {
    /// Adds a veth pair inside the namespace, quiet like `ra0`/`ra1`: down, no IPv6 link-local
    /// addresses, IPv6 disabled until a test enables it.
    ///
    /// - Parameters:
    ///   - name: one end, e.g. `rb0`.
    ///   - peer: the other end, e.g. `rb1`.
    /// - Throws: `HarnessError` when an `ip` or `sysctl` command fails.
    package func addQuietVethPair(_ name: String, peer: String) throws {
        try ip("link", "add", name, "type", "veth", "peer", "name", peer)
        for link in [name, peer] {
            try ip("link", "set", link, "addrgenmode", "none")
            try setIPv6(enabled: false, on: link)
        }
    }

    /// Whether this kernel can make links of a kind, tried with a scratch link that is deleted
    /// again (some test kernels lack `vlan`, `dummy`, `gre`, `bond`...).
    ///
    /// - Parameter arguments: what follows `ip -n NAME link add`, e.g.
    ///   `["link", "ra0", "name", "probe0", "type", "vlan", "id", "4000"]`; the new link must be
    ///   called `probe0`.
    /// - Returns: nil when it works, else `ip`'s error message.
    /// - Throws: `HarnessError` when `ip` cannot run.
    package func linkKindUnavailable(_ arguments: [String]) throws -> String? {
        let result = try Command.run("ip", ["-n", name, "link", "add"] + arguments)
        guard result.succeeded else { return result.standardError.trimmingCharacters(in: .whitespacesAndNewlines) }
        try ip("link", "delete", "probe0")
        return nil
    }

    /// The flags `ip` prints for a link, e.g. `["BROADCAST", "MULTICAST", "UP", "LOWER_UP"]`.
    ///
    /// - Parameter link: the link's name.
    /// - Throws: `HarnessError` when `ip` fails or prints no flags.
    package func linkFlags(_ link: String) throws -> Set<String> {
        let line = try ip("-o", "link", "show", "dev", link)
        guard let flags = Self.flags(inLinkLine: line) else {
            throw HarnessError("No flags in `ip link show dev \(link)`: \(line)")
        }
        return flags
    }

    /// The flags between `<` and `>` of an `ip link` line, or nil when it has none.
    ///
    /// - Parameter line: e.g. `3: ra0@ra1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 …`.
    package static func flags(inLinkLine line: String) -> Set<String>? {
        guard let open = line.firstIndex(of: "<"), let close = line.firstIndex(of: ">"), open < close else { return nil }
        return Set(line[line.index(after: open)..<close].split(separator: ",").map(String.init))
    }

    /// Waits until a link is up with carrier (`UP` and `LOWER_UP`), so that a test's expectation
    /// never depends on how fast the kernel brings a bridge or a tun up.
    ///
    /// - Parameter link: the link's name.
    /// - Throws: `HarnessError` with the last flags, on timeout.
    package func waitForCarrier(_ link: String) throws {
        try Poll.until("\(link) to be UP with LOWER_UP", observe: { try linkFlags(link) }) {
            $0.contains("UP") && $0.contains("LOWER_UP")
        }
    }

    /// The IPv6 addresses of a link with their flags, one `ip -6 -o addr` line each.
    ///
    /// - Parameter link: the link's name.
    /// - Throws: `HarnessError` when `ip` fails.
    package func ipv6AddressLines(_ link: String) throws -> [String] {
        try ip("-6", "-o", "addr", "show", "dev", link, "scope", "global")
            .split(separator: "\n").map(String.init)
    }

    /// Sends one router advertisement from `link` to all nodes, with RFC 8910's option 37
    /// carrying `uri` (none when nil). `link` needs IPv6 and a link-local address.
    ///
    /// - Parameters:
    ///   - uri: the captive-portal API URI to advertise, or nil.
    ///   - routerLifetime: seconds the receiver may use this router as its default router (0: it
    ///     is not one, and stops being one if it was).
    ///   - link: the link to send from.
    ///   - source: the router's link-local address to send from; nil lets the kernel choose,
    ///     which may differ between two calls while another link-local address finishes DAD (a
    ///     receiver then sees two routers).
    /// - Throws: `HarnessError` when python3 fails.
    package func advertiseCaptivePortalAPI(_ uri: String?, routerLifetime: UInt16 = 0, from link: String = "ra1", source: String? = nil) throws {
        let uri = Array((uri ?? "").utf8)
        let units = (2 + uri.count + 7) / 8
        let option = uri.isEmpty ? [] : [37, UInt8(units)] + uri + [UInt8](repeating: 0, count: units * 8 - 2 - uri.count)
        try sendRouterAdvertisement(options: option, routerLifetime: routerLifetime, from: link, source: source)
    }

    /// Sends one router advertisement from `link` to all nodes, with RFC 8781's PREF64 option
    /// (38) carrying `prefix`. `link` needs IPv6 and a link-local address.
    ///
    /// - Parameters:
    ///   - prefix: the NAT64 prefix, "64:ff9b::/96" form (/96, /64, /56, /48, /40 or /32).
    ///   - lifetime: its lifetime in seconds, a multiple of 8 (0: withdrawn).
    ///   - routerLifetime, link, source: as for ``advertiseCaptivePortalAPI(_:routerLifetime:from:source:)``.
    /// - Throws: `HarnessError` for another prefix length, or when python3 fails.
    package func advertiseNAT64Prefix(_ prefix: String, lifetime: UInt16, routerLifetime: UInt16 = 0, from link: String = "ra1", source: String? = nil) throws {
        let parts = prefix.split(separator: "/")
        guard parts.count == 2, let address = IPAddress(String(parts[0])), let length = Int(parts[1]),
              let code = [96, 64, 56, 48, 40, 32].firstIndex(of: length) else { throw HarnessError("not a NAT64 prefix: \(prefix)") }
        let field = (lifetime / 8) << 3 | UInt16(code)
        let option = [38, 2, UInt8(field >> 8), UInt8(field & 0xff)] + address.bytes.prefix(12)
        try sendRouterAdvertisement(options: option, routerLifetime: routerLifetime, from: link, source: source)
    }

    /// Sends one router advertisement from `link` to all nodes with `options` (their wire bytes);
    /// `link` itself does not hear it (no multicast loop), only the other end of its pair.
    private func sendRouterAdvertisement(options: [UInt8], routerLifetime: UInt16, from link: String, source: String?) throws {
        let hex = options.map { String(format: "%02x", $0) }.joined()
        let script = """
            import socket, struct
            index = socket.if_nametoindex(\(link.debugDescription))
            s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, \(link.debugDescription).encode())
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 0)
            if \((source ?? "").debugDescription):
                s.bind((\((source ?? "").debugDescription), 0, 0, index))
            s.sendto(struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, \(routerLifetime), 0, 0) + bytes.fromhex("\(hex)"), ("ff02::1", 0, 0, index))
            """
        try Command.run("ip", ["netns", "exec", name, "python3", "-c", script]).check()
    }

    /// Sets a sysctl inside the namespace (`ip netns exec NAME sysctl -qw KEY=VALUE`).
    ///
    /// - Parameters:
    ///   - key: e.g. `net.ipv6.conf.ra0.accept_dad`.
    ///   - value: the value.
    /// - Throws: `HarnessError` with stderr when `sysctl` fails.
    package func sysctl(_ key: String, _ value: String) throws {
        try Command.run("ip", ["netns", "exec", name, "sysctl", "-qw", "\(key)=\(value)"]).check()
    }
}

/// A fake sysfs tree for `--sysfs-root`: what the daemon reads to tell WiFi and WWAN apart.
package struct FakeSysfs {
    /// The tree's root, the daemon's `--sysfs-root`.
    package let root: String

    /// Creates an empty tree in the test's directory.
    ///
    /// - Parameter directory: the test's scratch directory.
    /// - Throws: when the directory cannot be created.
    package init(in directory: TemporaryDirectory) throws {
        root = directory.file("sysfs")
        try FileManager.default.createDirectory(atPath: "\(root)/class/net", withIntermediateDirectories: true)
    }

    /// Makes `link` look like a WiFi interface: `class/net/LINK/wireless` exists.
    ///
    /// The daemon reads sysfs when a link appears or is renamed: call this before the link
    /// exists or before the daemon starts.
    ///
    /// - Parameter link: the link's name.
    /// - Throws: when the directory cannot be created.
    package func markWireless(_ link: String) throws {
        try FileManager.default.createDirectory(atPath: "\(root)/class/net/\(link)/wireless", withIntermediateDirectories: true)
    }

    /// Gives `link` a `uevent` file with `DEVTYPE=type`, as the kernel writes for WiFi (`wlan`),
    /// modems (`wwan`), USB gadgets (`gadget`)...
    ///
    /// - Parameters:
    ///   - type: the `DEVTYPE=` value.
    ///   - link: the link's name.
    /// - Throws: when the file cannot be written.
    package func setDeviceType(_ type: String, of link: String) throws {
        let directory = "\(root)/class/net/\(link)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "INTERFACE=\(link)\nIFINDEX=99\nDEVTYPE=\(type)\n".write(toFile: "\(directory)/uevent", atomically: true, encoding: .utf8)
    }

    /// Makes `link`'s `device/driver` a symbolic link to a driver directory named `driver`, as
    /// sysfs does for a device bound to a driver (the target need not exist: only its name is read).
    ///
    /// - Parameters:
    ///   - driver: e.g. `qmi_wwan`.
    ///   - link: the link's name.
    /// - Throws: when the link cannot be made.
    package func setDriver(_ driver: String, of link: String) throws {
        let device = "\(root)/class/net/\(link)/device"
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(device)/driver", withDestinationPath: "../../../../bus/usb/drivers/\(driver)")
    }
}

extension Busctl {
    /// Calls `Explain()` and returns the report.
    ///
    /// - Throws: `HarnessError` when the call fails or the reply is not one string.
    package func explain() throws -> String {
        try callReturningText(BusContract.explainMethod)
    }

    /// Calls `Metrics()` and returns the text.
    ///
    /// - Throws: `HarnessError` when the call fails or the reply is not one string.
    package func metrics() throws -> String {
        try callReturningText(BusContract.metricsMethod)
    }

    private func callReturningText(_ member: String) throws -> String {
        struct Reply: Decodable {
            package var type: String
            package var data: [String]
        }
        let output = try run(["--json=short", "call", BusContract.busName, BusContract.objectPath, BusContract.interface, member])
            .check().standardOutput
        let reply = try JSONDecoder().decode(Reply.self, from: Data(output.utf8))
        guard reply.type == "s", reply.data.count == 1 else {
            throw HarnessError("\(member) returned \(reply.type) \(reply.data), expected one string")
        }
        return reply.data[0]
    }
}

extension DaemonTestCase {
    /// Waits until the daemon's log contains `text`.
    ///
    /// - Parameters:
    ///   - text: the awaited text.
    ///   - timeout: the deadline.
    /// - Returns: the whole log at that moment.
    /// - Throws: `HarnessError` with the log, on timeout, or when the daemon has exited.
    @discardableResult
    package func waitForLog(containing text: String, timeout: Duration = Poll.defaultTimeout) throws -> String {
        let daemon = try XCTUnwrap(daemon, "call startDaemon() first")
        do {
            return try Poll.until("the daemon to log \"\(text)\"", timeout: timeout, observe: { () -> String in
                if let ended = daemon.termination { throw HarnessError("reachabilityd exited (\(ended))") }
                return daemon.log
            }, accept: { $0.contains(text) })
        } catch let error as HarnessError {
            throw HarnessError("\(error.description.prefix(300))\n--- reachabilityd log ---\n\(daemon.log)")
        }
    }
}
