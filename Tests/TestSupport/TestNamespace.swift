import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A network namespace of one test: `lo` up and a veth pair `ra0`/`ra1`, both ends inside it,
/// down, IPv6 disabled on them.
///
/// Every `ip` command carries `-n NAME`: the tests never touch the host's interfaces or routes.
/// The namespace is deleted by `delete()` or at `deinit`.
package final class TestNamespace {
    /// Numbers namespaces within this test process.
    private static let sequence = Atomic<Int>(0)

    /// The names' prefix, `rtest-<pid>-<random>-`: unique to this run, so that a run never
    /// collides with what another run (live, or killed before its `deinit`s, under a pid reused
    /// since) left. A run deletes only the namespaces it made: other runs' are theirs, whether
    /// alive or not (a pid that looks dead here may live in another pid namespace).
    private static let runPrefix = "rtest-\(getpid())-\(String(UInt32.random(in: .min ... .max), radix: 16))-"

    /// The namespace's name, `rtest-<pid>-<random>-<n>`: unique on the machine.
    package let name: String
    private var isDeleted = false

    /// Creates the namespace and, unless told not to, its links.
    ///
    /// - Parameter withVethPair: whether to make `ra0`/`ra1` (a router namespace gets the test
    ///   namespace's `ra1` instead).
    /// - Throws: `HarnessError` with `ip`'s stderr when a command fails.
    package init(withVethPair: Bool = true) throws {
        let number = Self.sequence.wrappingAdd(1, ordering: .relaxed).newValue
        name = Self.runPrefix + String(number)
        try Command.run("ip", ["netns", "add", name]).check()
        do {
            if withVethPair {
                try ip("link", "add", "ra0", "type", "veth", "peer", "name", "ra1")
                // Quiet links, so that the daemon re-evaluates only for the events a test causes:
                // no IPv6 link-local addresses (their duplicate address detection ends a second or
                // so after the link comes up), and no IPv6 at all until a test enables it (the
                // kernel adds and deletes IPv6 multicast routes whenever a link goes up or down,
                // which would hide a daemon that ignores link events).
                for link in ["ra0", "ra1"] {
                    try ip("link", "set", link, "addrgenmode", "none")
                    try setIPv6(enabled: false, on: link)
                }
            }
            try ip("link", "set", "lo", "up")
            // The daemon judges `DNS` by /etc/resolv.conf: a resolver on this host, not the
            // machine's file, so that every test sees the same servers (routed whenever the
            // namespace is reachable: `DNS` adds nothing to `Reason`). DNS tests write their own.
            try writeEtcFile("resolv.conf", "nameserver 127.0.0.1\n")
        } catch {
            delete()
            throw error
        }
    }

    deinit {
        delete()
    }

    /// Runs `ip -n NAME ARGUMENTS…`.
    ///
    /// - Parameter arguments: what follows `-n NAME`, e.g. `"addr", "add", "10.0.0.2/24", "dev", "ra0"`.
    /// - Returns: what `ip` printed.
    /// - Throws: `HarnessError` with the command and its stderr when it exits non-zero.
    @discardableResult
    package func ip(_ arguments: String...) throws -> String {
        try Command.run("ip", ["-n", name] + arguments).check().standardOutput
    }

    /// Enables or disables IPv6 on a link (`net.ipv6.conf.LINK.disable_ipv6`, set inside the
    /// namespace through `ip netns exec NAME sysctl`).
    ///
    /// - Parameters:
    ///   - enabled: whether the link gets IPv6.
    ///   - link: the link's name.
    /// - Throws: `HarnessError` with stderr when `sysctl` fails.
    package func setIPv6(enabled: Bool, on link: String) throws {
        try Command.run("ip", ["netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.\(link).disable_ipv6=\(enabled ? 0 : 1)"])
            .check()
    }

    /// Writes `/etc/netns/NAME/FILE`, which `ip netns exec` mounts over `/etc/FILE` for the
    /// processes it starts afterwards (the daemon's `hosts` and `resolv.conf`). Removed with the
    /// namespace.
    ///
    /// - Throws: `HarnessError` when the file cannot be written.
    package func writeEtcFile(_ file: String, _ contents: String) throws {
        let directory = "/etc/netns/\(name)"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try contents.write(toFile: "\(directory)/\(file)", atomically: true, encoding: .utf8)
        } catch {
            throw HarnessError("cannot write \(directory)/\(file): \(error)")
        }
    }

    /// Appends `line` to `/etc/netns/NAME/FILE` in place, so that processes `ip netns exec`
    /// started earlier (which bind-mounted that file over `/etc/FILE`) read it too.
    ///
    /// - Throws: `HarnessError` when the file cannot be opened or written.
    package func appendToEtcFile(_ file: String, _ line: String) throws {
        let path = "/etc/netns/\(name)/\(file)"
        guard let handle = FileHandle(forWritingAtPath: path) else { throw HarnessError("cannot open \(path) to append") }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((line + "\n").utf8))
        } catch {
            throw HarnessError("cannot append to \(path): \(error)")
        }
    }

    /// Deletes the namespace (and its `/etc/netns` files); harmless when repeated. Stop
    /// processes inside it first.
    package func delete() {
        guard !isDeleted else { return }
        isDeleted = true
        _ = try? Command.run("ip", ["netns", "delete", name])
        try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
    }
}
