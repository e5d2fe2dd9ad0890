import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Tools of the fault tests (issue 6): the daemon's netlink sockets and memory as the kernel
/// reports them, burst files for `ip -batch`, and the Python helpers that play hostile peers.
package enum FaultInjection {
    /// The Python with `dbus-python` (Debian's; a `python3` earlier in `PATH` may lack it).
    package static let python = "/usr/bin/python3"

    /// Writes one of the helper scripts into the test's directory.
    ///
    /// - Parameters:
    ///   - script: the script's text, e.g. `FaultScripts.busClient`.
    ///   - name: its file name.
    ///   - directory: the test's scratch directory.
    /// - Returns: the script's path.
    /// - Throws: when the file cannot be written.
    package static func install(_ script: String, as name: String, in directory: TemporaryDirectory) throws -> String {
        let path = directory.file(name)
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts a dbus-python stand-in for a system service: lets it own `busName` on `bus`,
    /// installs `script` as `name` in `directory`, runs it with the bus's address and
    /// `arguments`, and returns once it printed "ready" (it owns the name).
    ///
    /// - Throws: `HarnessError` with what it printed when it ends before that.
    package static func startStandIn(
        _ script: String, as name: String, owning busName: String, on bus: PrivateBus, in directory: TemporaryDirectory, arguments: [String]
    ) throws -> ChildProcess {
        try bus.allowStandIn(for: busName)
        let path = try install(script, as: name, in: directory)
        let output = directory.file(name + ".out")
        let process = try ChildProcess(python, [path, bus.address] + arguments, standardOutput: output, standardError: output)
        try Poll.until("\(name) to own \(busName)", observe: { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }) { printed in
            if let ended = process.poll() { throw HarnessError("\(name) ended (\(ended)): \(printed)") }
            return printed.contains("ready")
        }
        return process
    }

    /// Decodes the one JSON object a helper printed on stdout.
    ///
    /// - Parameter result: the helper's outcome; it must have succeeded.
    /// - Returns: the object.
    /// - Throws: `HarnessError` with the helper's output when it failed or printed no object.
    package static func json(_ result: CommandResult) throws -> [String: Any] {
        try result.check()
        guard let line = result.standardOutput.split(separator: "\n").last,
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else {
            throw HarnessError("`\(result.commandLine)` printed no JSON object: \(result.standardOutput)\(result.standardError)")
        }
        return object
    }

    /// The resident set of a process (`VmRSS` in `/proc/PID/status`), in KiB.
    ///
    /// - Parameter pid: the process.
    /// - Returns: the size, or nil when the process is gone.
    package static func residentKiB(of pid: pid_t) -> Int? {
        statusField("VmRSS", of: pid).flatMap { Int($0.split(separator: " ").first ?? "") }
    }

    /// The threads of a process (`Threads` in `/proc/PID/status`).
    ///
    /// - Parameter pid: the process.
    /// - Returns: the count, or nil when the process is gone.
    package static func threadCount(of pid: pid_t) -> Int? {
        statusField("Threads", of: pid).flatMap { Int($0) }
    }

    /// The process ids of a process's children (the daemon's: its check helper).
    ///
    /// - Parameter pid: the parent.
    /// - Returns: the children running now (none: empty).
    package static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { statusField("PPid", of: $0) == String(pid) }
    }

    /// The CPU time a process has used, user and system (`utime` + `stime` in `/proc/PID/stat`).
    ///
    /// - Parameter pid: the process; `getpid()` for the test process itself (all its threads).
    /// - Returns: the time, at the kernel's clock-tick resolution (10 ms), or nil when it is gone.
    package static func cpuTime(of pid: pid_t) -> Duration? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let commandEnd = text.lastIndex(of: ")")
        else { return nil }
        // After "PID (COMM)": state is field 3, utime field 14, stime field 15.
        let fields = text[text.index(after: commandEnd)...].split(separator: " ")
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        return .milliseconds((user + system) * 1000 / Int64(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// The signals a process ignores (`SigIgn` in `/proc/PID/status`), as a bit set: bit
    /// `n - 1` is signal `n`.
    ///
    /// - Parameter pid: the process.
    /// - Returns: the mask, or nil when the process is gone.
    package static func ignoredSignals(of pid: pid_t) -> UInt64? {
        statusField("SigIgn", of: pid).flatMap { UInt64($0, radix: 16) }
    }

    private static func statusField(_ name: String, of pid: pid_t) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("\(name):") {
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// One `NETLINK_ROUTE` socket of a process, as `/proc/net/netlink` of its namespace shows it.
    package struct NetlinkSocketRow: CustomStringConvertible {
        /// The socket's port id (`nl_pid`), where unicast datagrams are sent.
        package var portID: UInt32
        /// The multicast groups it listens to (the first 32), 0 for the query socket.
        package var groups: UInt32
        /// Bytes queued for reading.
        package var receiveQueued: Int
        /// Messages the kernel could not queue (the socket overflowed).
        package var drops: Int

        /// Whether this is the daemon's monitor socket: subscribed to links (`RTNLGRP_LINK`,
        /// bit 0), not the neighbour socket (only `RTNLGRP_NEIGH`) or the query socket (none).
        package var isMonitor: Bool { groups & 1 != 0 }

        package var description: String {
            "port \(portID) groups 0x\(String(groups, radix: 16)) queued \(receiveQueued) drops \(drops)"
        }
    }

    /// The process's rtnetlink sockets: the rows of the namespace's `/proc/net/netlink` whose
    /// inode is one of the process's `socket:[INODE]` descriptors.
    ///
    /// - Parameters:
    ///   - pid: the process.
    ///   - namespace: the namespace it runs in.
    /// - Throws: `HarnessError` when `/proc` cannot be read.
    package static func netlinkSockets(of pid: pid_t, in namespace: TestNamespace) throws -> [NetlinkSocketRow] {
        var inodes = Set<Int>()
        for descriptor in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)"),
                  target.hasPrefix("socket:["), let inode = Int(target.dropFirst(8).dropLast())
            else { continue }
            inodes.insert(inode)
        }
        let table = try Command.run("ip", ["netns", "exec", namespace.name, "cat", "/proc/net/netlink"]).check().standardOutput
        // sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 10, fields[1] == "0", let inode = Int(fields[9]), inodes.contains(inode),
                  let port = Int64(fields[2]), let groups = UInt32(fields[3], radix: 16),
                  let queued = Int(fields[4]), let drops = Int(fields[8])
            else { return nil }
            return NetlinkSocketRow(portID: UInt32(truncatingIfNeeded: port), groups: groups, receiveQueued: queued, drops: drops)
        }
    }

    /// The effective receive buffer the daemon logged ("Netlink receive buffer: N bytes").
    ///
    /// - Parameter log: the daemon's log.
    /// - Returns: N, or nil when not logged.
    package static func loggedReceiveBuffer(in log: String) -> Int? {
        for line in log.split(separator: "\n") {
            guard let range = line.range(of: "Netlink receive buffer: ") else { continue }
            return Int(line[range.upperBound...].split(separator: " ").first ?? "")
        }
        return nil
    }

    /// How often `text` occurs in `log`.
    package static func occurrences(of text: String, in log: String) -> Int {
        log.components(separatedBy: text).count - 1
    }

    /// Seconds since `start`, for the printed figures.
    package static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).timeInterval
    }
}

/// An `ip -batch` file of netlink churn and the truth it leaves behind.
///
/// The links: `ra0` (10.77.0.2/24, peer `ra1`), `rb0` (10.78.0.2/24, peer `rb1`) and `rc0`
/// (10.79.0.2/24, peer `rc1`), all up, set up by ``ChurnBurst/configureLinks(in:)``.
///
/// Route changes alternate between routes a kernel-side filter for the probe destinations keeps
/// (8.8.8.8/8…/32 in tables 100–199, distinct metrics: they contain 8.8.8.8 but no rule uses the
/// tables) and ones it drops (10.200.0.0/13 host routes in main). Every 997 changes the main
/// default route cycles via `ra0`, via `rb0`, deleted; every 499 an address on `ra0` is added or
/// deleted; every 20,011 `rc1` goes down and up (carrier on `rc0`). The last line makes the
/// default route go via `rb0`: the final truth is reachable-via-ethernet on `rb0`.
package struct ChurnBurst {
    /// The lines of the batch.
    package private(set) var lines: [String] = []
    /// How many times the truth's `Status` changed, from not-reachable before the burst.
    package private(set) var realStatusChanges = 0
    /// How many default-route changes the burst makes.
    package private(set) var defaultRouteChanges = 0
    /// How many route additions the burst makes.
    package let routeChanges: Int

    /// The status after the burst.
    package let finalStatus = "reachable-via-ethernet"
    /// The interface after the burst.
    package let finalInterface = "rb0"

    /// Builds a burst.
    ///
    /// - Parameter routeChanges: how many routes it adds (plus the default-route, address and
    ///   link changes interleaved).
    package init(routeChanges: Int) {
        self.routeChanges = routeChanges
        let toggles = [
            "route replace default via 10.77.0.1 dev ra0",
            "route replace default via 10.78.0.1 dev rb0",
            "route del default",
        ]
        var reachable = false
        var toggle = 0
        lines.reserveCapacity(routeChanges + routeChanges / 400 + 8)
        for change in 0..<routeChanges {
            if change.isMultiple(of: 2) {
                let prefixLength = 8 + (change / 2) % 25
                let table = 100 + (change / 50) % 100
                let metric = 1 + change / 5000
                lines.append("route add \(Self.network(of: 0x0808_0808, prefixLength: prefixLength))/\(prefixLength) via 10.77.0.1 table \(table) metric \(metric)")
            } else {
                let host = change / 2
                lines.append("route add 10.\(200 + host / 65536 % 8).\(host / 256 % 256).\(host % 256)/32 via 10.77.0.1")
            }
            if change % 997 == 0 {
                lines.append(toggles[toggle % 3])
                let next = toggle % 3 != 2
                if next != reachable { realStatusChanges += 1 }
                reachable = next
                toggle += 1
                defaultRouteChanges += 1
            }
            if change % 499 == 0 {
                let verb = (change / 499).isMultiple(of: 2) ? "add" : "del"
                lines.append("address \(verb) 10.77.1.\((change / 998) % 250 + 1)/32 dev ra0")
            }
            if change % 20011 == 0 {
                lines += ["link set rc1 down", "link set rc1 up"]
            }
        }
        lines.append(toggles[1])
        defaultRouteChanges += 1
        if !reachable { realStatusChanges += 1 }
    }

    /// Writes the batch file.
    ///
    /// - Parameter path: where.
    /// - Throws: when it cannot be written.
    package func write(to path: String) throws {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Adds `rb0`/`rb1` and `rc0`/`rc1`, gives `ra0`, `rb0` and `rc0` their addresses and brings
    /// all six ends up; waits for carrier on the three.
    ///
    /// - Parameter namespace: the test's namespace (with `ra0`/`ra1`).
    /// - Throws: `HarnessError` when a command fails.
    package static func configureLinks(in namespace: TestNamespace) throws {
        try namespace.addQuietVethPair("rb0", peer: "rb1")
        try namespace.addQuietVethPair("rc0", peer: "rc1")
        for (link, address) in [("ra", "10.77.0.2/24"), ("rb", "10.78.0.2/24"), ("rc", "10.79.0.2/24")] {
            try namespace.ip("addr", "add", address, "dev", "\(link)0")
            try namespace.ip("link", "set", "\(link)1", "up")
            try namespace.ip("link", "set", "\(link)0", "up")
        }
        for link in ["ra0", "rb0", "rc0"] { try namespace.waitForCarrier(link) }
    }

    /// The dotted network address of `address/prefixLength`.
    private static func network(of address: UInt32, prefixLength: Int) -> String {
        let mask: UInt32 = prefixLength == 0 ? 0 : ~UInt32(0) << (32 - prefixLength)
        let network = address & mask
        return [24, 16, 8, 0].map { String((network >> UInt32($0)) & 0xff) }.joined(separator: ".")
    }
}
