import Foundation

/// A private system-like bus: a `dbus-daemon` of type `system` on a path socket, with the
/// stock system bus's deny-by-default policy and the project's `dbus/*.conf`.
///
/// The socket is a path, not an abstract socket: abstract sockets belong to a network namespace,
/// and the daemon under test runs in another one. The bus stops at `stop()` or `deinit`.
package final class PrivateBus {
    /// The bus address to hand to clients: `unix:path=…`, without the `,guid=`.
    package let address: String
    /// The path of the listening socket.
    package let socketPath: String
    /// The file the bus writes its diagnostics to.
    package let logPath: String
    private let process: ChildProcess

    /// Starts a bus with the project's policy and waits until it has printed its address.
    ///
    /// - Parameter directory: where the configuration, socket and logs go.
    /// - Throws: `HarnessError` when the bus does not start.
    package convenience init(in directory: TemporaryDirectory) throws {
        try self.init(in: directory, extraPolicy: nil)
    }

    /// Starts a bus with the project's policy and `extraPolicy` (`<policy>` elements, e.g. one
    /// letting root own a stand-in's name), and waits until it has printed its address.
    ///
    /// - Parameters:
    ///   - directory: where the configuration, socket and logs go.
    ///   - extraPolicy: further `<policy>` elements; nil: none.
    /// - Throws: `HarnessError` when the bus does not start.
    package convenience init(in directory: TemporaryDirectory, extraPolicy: String?) throws {
        var policyFiles = try TestPaths.policyFiles()
        if let extraPolicy {
            let path = directory.file("extra-policy.conf")
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                \(extraPolicy)
                </busconfig>
                """.write(toFile: path, atomically: true, encoding: .utf8)
            policyFiles.append(path)
        }
        try self.init(in: directory) { try Self.configuration(socketPath: $0, policyFiles: policyFiles) }
    }

    /// Starts a bus where any connection may own any name and call anything (a session-type
    /// bus, no project policy): the bus core's own tests, which need no root.
    ///
    /// - Parameter directory: where the configuration, socket and logs go.
    /// - Returns: the running bus.
    /// - Throws: `HarnessError` when the bus does not start.
    package static func permissive(in directory: TemporaryDirectory) throws -> PrivateBus {
        try PrivateBus(in: directory) { socketPath in
            """
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(escaped(socketPath))</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        }
    }

    private init(in directory: TemporaryDirectory, configuration: (String) throws -> String) throws {
        let socketPath = directory.file("system_bus_socket")
        let logPath = directory.file("dbus-daemon.log")
        let configPath = directory.file("bus.conf")
        let addressPath = directory.file("bus.address")
        try configuration(socketPath).write(toFile: configPath, atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            "dbus-daemon", ["--config-file=\(configPath)", "--nofork", "--print-address=1"],
            standardOutput: addressPath, standardError: logPath
        )
        let firstLine = try Poll.until("dbus-daemon to print its address", observe: { () -> String? in
            if let ended = process.poll() {
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw HarnessError("dbus-daemon exited (\(ended)) before printing its address: \(log)")
            }
            let printed = (try? String(contentsOfFile: addressPath, encoding: .utf8)) ?? ""
            guard let newline = printed.firstIndex(of: "\n") else { return nil }
            return String(printed[..<newline])
        }, accept: { $0 != nil })!
        self.process = process
        self.socketPath = socketPath
        self.logPath = logPath
        address = Self.strippingGUID(firstLine)
    }

    deinit {
        stop()
    }

    /// The `dbus-daemon` process id, e.g. to kill the bus under a connected daemon.
    package var pid: pid_t {
        process.pid
    }

    /// What the bus wrote to stderr so far.
    package var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Lets a stand-in for a system service (root, as the tests run) own `name` and be called
    /// by anyone, as the service's own policy file does on a real system: a policy file in the
    /// bus's directory of test-only policies, then `ReloadConfig`, which returns once the bus
    /// has read it.
    ///
    /// - Parameters:
    ///   - name: the service's well-known name, e.g. `org.freedesktop.resolve1`.
    ///   - user: the user the service runs as (the real systemd-networkd drops to `systemd-network`).
    /// - Throws: `HarnessError` when the file cannot be written or the bus does not reload.
    package func allowStandIn(for name: String, user: String = "root") throws {
        let policy = """
            <busconfig>
              <policy user="\(Self.escaped(user))"><allow own="\(Self.escaped(name))"/></policy>
              <policy context="default"><allow send_destination="\(Self.escaped(name))"/></policy>
            </busconfig>
            """
        try policy.write(toFile: Self.standInPolicyDirectory(socketPath: socketPath) + "/\(name).conf", atomically: true, encoding: .utf8)
        try Command.run("busctl", [
            "--address=\(address)", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReloadConfig",
        ]).check()
    }

    /// The directory of the stand-ins' policy files (``allowStandIn(for:)``), beside the socket.
    private static func standInPolicyDirectory(socketPath: String) -> String {
        (socketPath as NSString).deletingLastPathComponent + "/bus.d"
    }

    /// Stops the bus; harmless when repeated.
    package func stop() {
        process.terminate()
    }

    /// Removes the `,guid=…` part of an address: a restarted bus gets another GUID.
    ///
    /// - Parameter address: an address as `dbus-daemon --print-address` prints it.
    /// - Returns: the address without its GUID.
    package static func strippingGUID(_ address: String) -> String {
        address.split(separator: ",")
            .filter { !$0.hasPrefix("guid=") }
            .joined(separator: ",")
    }

    /// The bus configuration: `scripts/private-system-bus.conf.in` (shared with `make run`)
    /// with the socket, every project policy file, the directory of the stand-ins' policies, and
    /// root as the test-only owner of the name (the daemon under test runs as root; the shipped
    /// policy lets only `reachabilityd` own it).
    ///
    /// - Parameters:
    ///   - socketPath: the listening socket's path.
    ///   - policyFiles: absolute paths of the policy files to include.
    /// - Returns: the XML text.
    /// - Throws: when the template cannot be read.
    package static func configuration(socketPath: String, policyFiles: [String]) throws -> String {
        let standIns = standInPolicyDirectory(socketPath: socketPath)
        try FileManager.default.createDirectory(atPath: standIns, withIntermediateDirectories: true)
        let includes = (policyFiles.map { "  <include>\(escaped($0))</include>" } + ["  <includedir>\(escaped(standIns))</includedir>"])
            .joined(separator: "\n")
        return try String(contentsOfFile: TestPaths.privateBusTemplate, encoding: .utf8)
            .replacingOccurrences(of: "@SOCKET_PATH@", with: escaped(socketPath))
            .replacingOccurrences(of: "@OWNER_USER@", with: "root")
            .replacingOccurrences(of: "@INCLUDES@", with: includes)
    }

    /// Escapes text for an XML element or attribute.
    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
