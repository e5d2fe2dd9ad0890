import Foundation
import ReachabilityCore
import ReachabilityProperties
import TestSupport
import XCTest

/// The Varlink interface `org.reachabilityd.Reachability` against the running daemon, with a
/// client nobody here wrote (the Python `varlink` package from PyPI) and with raw bytes: the
/// state as the bus publishes it, the subscription following a route change, the errors, and
/// hostile peers.
final class VarlinkTests: DaemonTestCase {
    private var socket: String {
        get throws { VarlinkPeer.socketPath(in: try XCTUnwrap(directory)) }
    }

    func testIntrospectionServesTheIDLFileAndTheServiceInterface() throws {
        // Given the daemon
        try startDaemon()

        // When the Python client introspects the socket (it parses every description)
        let introspection = try VarlinkPeer.python(try socket, ["introspect"])

        // Then both interfaces are there, ours word for word as the IDL file
        let info = try XCTUnwrap(introspection["info"] as? [String: Any])
        XCTAssertEqual(info["interfaces"] as? [String], ["org.reachabilityd.Reachability", "org.varlink.service"])
        XCTAssertEqual(info["product"] as? String, "reachabilityd")
        let descriptions = try XCTUnwrap(introspection["descriptions"] as? [String: String])
        let idl = try String(contentsOfFile: TestPaths.dbusDirectory + "/org.reachabilityd.Reachability.varlink", encoding: .utf8)
        XCTAssertEqual(descriptions["org.reachabilityd.Reachability"].map { $0 + "\n" }, idl)
    }

    func testWithoutABusVarlinkAnswersAndTheBusNameIsTakenOnceTheBusAppears() throws {
        // Given a daemon whose system bus is not there yet (its socket path does not exist)
        let directory = try XCTUnwrap(directory)
        let later = directory.file("later_bus_socket")
        let daemon = try DaemonProcess(
            binary: try TestPaths.daemonBinary(), namespace: try netns, busAddress: "unix:path=\(later)", directory: directory
        )
        defer { _ = daemon.stop() }

        // When it starts, Then it is ready and answers on Varlink
        try daemon.waitUntilReady()
        let reply = try VarlinkPeer.call(try socket, "GetState")
        let state = try XCTUnwrap((reply["parameters"] as? [String: Any])?["state"] as? [String: Any], "\(reply)")
        XCTAssertEqual(state["status"] as? String, ReachabilityStatus.notReachable.rawValue)
        XCTAssertNil(try busctl.daemonNameOwner())

        // When the bus's socket appears
        XCTAssertEqual(symlink(try XCTUnwrap(bus).socketPath, later), 0)

        // Then the daemon takes its name, and the bus publishes the state Varlink does
        try Poll.until("the daemon owns \(BusContract.busName)") { try busctl.daemonNameOwner() != nil }
        let properties = try busctl.properties()
        XCTAssertEqual(properties.status, state["status"] as? String)
        XCTAssertEqual(properties.generation, (state["generation"] as? NSNumber)?.uint64Value)
    }

    func testABrokerThatNeverAnswersStallsNothingAndHoldsREADYBack() throws {
        // Given a bus socket whose broker accepts connections and never answers (a hung
        // dbus.service behind a listening dbus.socket), and a default route
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let directory = try XCTUnwrap(directory)
        let hung = directory.file("hung_bus_socket")
        let broker = try ChildProcess(FaultInjection.python, [
            "-c", "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(64); time.sleep(3600)", hung,
        ])
        defer { _ = broker.terminate() }
        try Poll.until("the hung broker listens") { FileManager.default.fileExists(atPath: hung) }

        // When the daemon starts with it as its system bus
        let daemon = try DaemonProcess(binary: try TestPaths.daemonBinary(), namespace: try netns, busAddress: "unix:path=\(hung)", directory: directory)
        defer { _ = daemon.stop() }

        // Then Varlink answers (its queue does not wait for the broker), and READY=1 waits for
        // the bus name the broker never grants
        let reply = try Poll.until("Varlink answers", timeout: .seconds(15), observe: { try? VarlinkPeer.call(try self.socket, "GetState") }) { $0 != nil }
        XCTAssertNotNil((reply?["parameters"] as? [String: Any])?["state"], "\(String(describing: reply))")
        XCTAssertFalse(daemon.notifications.contains { $0.contains("READY=1") }, daemon.log)

        // And the default routes, read after READY=1 or a second after start, are listed all the same
        let gateways = try Poll.until("Interfaces lists ra0's gateway", observe: {
            let state = (try? VarlinkPeer.call(try self.socket, "GetState"))?["parameters"] as? [String: Any]
            let interfaces = (state?["state"] as? [String: Any])?["interfaces"] as? [[String: Any]] ?? []
            return interfaces.first { $0["name"] as? String == "ra0" }?["gateways"] as? [String] ?? []
        }) { $0 == ["10.77.0.1"] }
        XCTAssertEqual(gateways, ["10.77.0.1"])
    }

    func testGetStateIsTheBusStateKeyedAsStatusJSONWithGeneration() throws {
        // Given a reachable namespace
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let bus = try settledProperties()

        // When the Python client asks GetState
        let reply = try VarlinkPeer.call(try socket, "GetState")

        // Then every JSON key of the property table is there with the bus's value, and generation
        let state = try XCTUnwrap((reply["parameters"] as? [String: Any])?["state"] as? [String: Any], "\(reply)")
        XCTAssertEqual(Set(state.keys), Set(ReachabilityProperty.allCases.compactMap(\.definition.jsonKey) + ["generation"]))
        XCTAssertEqual(state["status"] as? String, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertEqual(state["interface"] as? String, bus.string(.interface))
        XCTAssertEqual(state["reason"] as? String, bus.string(.reason))
        XCTAssertEqual((state["generation"] as? NSNumber)?.uint64Value, bus.generation)
        XCTAssertEqual(Set((state["interfaces"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []), ["ra0", "ra1"])
    }

    func testSubscribeAnswersTheStateThenEachChangeWithTheBusGeneration() throws {
        // Given the daemon and a subscriber
        try startDaemon()
        let output = try XCTUnwrap(directory).file("subscription")
        XCTAssertTrue(FileManager.default.createFile(atPath: output, contents: nil))
        let subscriber = try ChildProcess(VarlinkPeer.python, [VarlinkPeer.script, try socket, "subscribe", output])
        defer { _ = subscriber.terminate() }
        let first = try Poll.until("the subscription's first state", observe: { try Self.states(in: output) }) { !$0.isEmpty }
        XCTAssertEqual(first[0]["status"] as? String, ReachabilityStatus.notReachable.rawValue)

        // When a route appears, then goes
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        try netns.ip("route", "del", "default")
        let bus = try waitForStatus(.notReachable)

        // Then the subscriber saw both, one state per published change, up to the bus's Generation
        let seen = try Poll.until("the subscriber at Generation \(bus.generation ?? 0)", observe: { try Self.states(in: output) }) {
            ($0.last?["generation"] as? NSNumber)?.uint64Value == bus.generation
        }
        let statuses = seen.compactMap { $0["status"] as? String }
        XCTAssertTrue(statuses.contains(ReachabilityStatus.reachableViaEthernet.rawValue), "\(statuses)")
        XCTAssertEqual(statuses.last, ReachabilityStatus.notReachable.rawValue)
        let generations = seen.compactMap { ($0["generation"] as? NSNumber)?.uint64Value }
        XCTAssertEqual(generations, Array(generations[0]...generations[0] + UInt64(generations.count - 1)), "one reply per change")
        XCTAssertNil(subscriber.poll(), "the subscription ended")
    }

    func testASubscriberThatDoesNotReadGetsOnlyTheLatestStateOnceItReadsAgain() throws {
        // Given a large state (a hundred links listed in interfaces) and a subscriber that stops reading
        try startDaemon()
        let batch = try XCTUnwrap(directory).file("links.batch")
        try (0..<50).map { "link add slow\($0) type veth peer name slower\($0)\n" }.joined().write(toFile: batch, atomically: true, encoding: .utf8)
        try netns.ip("-batch", batch)
        try configureIPv4Link()
        try waitForProperties("the hundred links listed") { $0.interfaces.count >= 102 }
        let reader = try RawVarlinkConnection(path: try socket)
        reader.send(message: #"{"method":"org.reachabilityd.Reachability.Subscribe","more":true}"#)
        let first = try XCTUnwrap(try reader.receive())

        // When the status changes more often than the daemon's socket buffer holds states
        for _ in 0..<40 {
            try addIPv4DefaultRoute()
            try waitForStatus(.reachableViaEthernet)
            try netns.ip("route", "del", "default")
            try waitForStatus(.notReachable)
        }
        let last = try XCTUnwrap(try settledProperties().generation)

        // Then, reading again, it gets what was in the socket and then the latest state: the
        // states in between were skipped, never queued
        var generations = [try Self.generation(of: first)]
        while generations.last != last {
            generations.append(try Self.generation(of: try XCTUnwrap(try reader.receive(), "the connection ended at \(generations)")))
        }
        XCTAssertLessThan(generations.count, Int(last - generations[0]) + 1, "every change was queued: \(generations)")
        XCTAssertEqual(generations, generations.sorted())
        XCTAssertNil(daemon?.termination)
    }

    /// The generation of a subscription's reply.
    private static func generation(of reply: [String: Any]) throws -> UInt64 {
        let state = try XCTUnwrap((reply["parameters"] as? [String: Any])?["state"] as? [String: Any], "\(reply)")
        return try XCTUnwrap((state["generation"] as? NSNumber)?.uint64Value)
    }

    func testReachabilityctlAsksThroughTheSocketWithoutABus() throws {
        // Given the daemon, and reachabilityctl with no bus to reach
        try startDaemon()
        let control = try TestPaths.builtExecutable("reachabilityctl", overriddenBy: "REACHABILITYCTL_PATH")
        let noBus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent", "REACHABILITYD_SOCKET": try socket, "LANG": "C"]

        // When it asks for the status through the socket
        let status = try Command.run(control, ["status", "--json", "--varlink"], environment: noBus)

        // Then it prints the daemon's state, as status --json does over the bus
        let record = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any], status.standardOutput + status.standardError)
        XCTAssertEqual(status.termination, .exited(0), status.standardError)
        XCTAssertEqual(record["status"] as? String, ReachabilityStatus.notReachable.rawValue)
        XCTAssertEqual(record["daemonAvailable"] as? Bool, true)

        // And wait follows a route change through it (the socket given as --varlink=PATH)
        let waiter = try ChildProcess(control, ["wait", "--timeout", "30", "--varlink=\(try socket)"], environment: noBus)
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        XCTAssertEqual(waiter.wait(timeout: .seconds(30)), .exited(0))

        // And without --varlink, with no bus but the socket there, it asks the socket all the same
        let fallback = try Command.run(control, ["status", "--json"], environment: noBus)
        XCTAssertEqual(fallback.termination, .exited(0), fallback.standardOutput + fallback.standardError)
        XCTAssertTrue(fallback.standardOutput.contains(#""status":"reachable-via-ethernet""#), fallback.standardOutput)

        // And every verb that asks the daemon asks the socket: check of an address (CheckDestination)…
        let address = try Command.run(control, ["check", "198.51.100.7", "--json", "--varlink"], environment: noBus)
        XCTAssertEqual(address.termination, .exited(0), address.standardOutput + address.standardError)
        XCTAssertTrue(address.standardOutput.contains(#""status":"reachable-via-ethernet""#), address.standardOutput)
        // … of a host name, resolved here and each address asked (without --varlink: no bus, the socket)
        let name = try Command.run(control, ["check", "localhost", "--json"], environment: noBus)
        XCTAssertTrue([.exited(0), .exited(1)].contains(name.termination), name.standardOutput + name.standardError)
        XCTAssertTrue(name.standardOutput.contains(#""resolution":"resolved""#), name.standardOutput)
        XCTAssertTrue(name.standardOutput.contains(#""daemonAvailable":true"#), name.standardOutput)
        // … wait --host (the same destination check, followed)
        let host = try Command.run(control, ["wait", "--host", "198.51.100.7", "--timeout", "30", "--varlink"], environment: noBus)
        XCTAssertEqual(host.termination, .exited(0), host.standardOutput + host.standardError)
        // … explain, metrics (the IDL's Metrics), check-connectivity and node-problem
        let explain = try Command.run(control, ["explain", "--json", "--varlink"], environment: noBus)
        XCTAssertEqual(explain.termination, .exited(0), explain.standardError)
        XCTAssertTrue(explain.standardOutput.contains("ra0"), explain.standardOutput)
        let metrics = try Command.run(control, ["metrics"], environment: noBus)
        XCTAssertEqual(metrics.termination, .exited(0), metrics.standardError)
        XCTAssertTrue(metrics.standardOutput.contains("reachabilityd_build_info"), metrics.standardOutput)
        let connectivity = try Command.run(control, ["check-connectivity", "--json", "--varlink=\(try socket)"], environment: noBus)
        XCTAssertTrue([.exited(0), .exited(1)].contains(connectivity.termination), connectivity.standardError)
        XCTAssertTrue(connectivity.standardOutput.contains(#""connectivity":"#), connectivity.standardOutput)
        let problem = try Command.run(control, ["node-problem", "network", "--varlink"], environment: noBus)
        XCTAssertEqual(problem.termination, .exited(0), problem.standardOutput + problem.standardError)

        // And a socket nobody serves is the daemon unavailable (exit 69), the socket named
        for verb in [["status"], ["check", "198.51.100.7"], ["explain"], ["metrics"], ["check-connectivity"]] {
            let absent = try Command.run(control, verb + ["--varlink=/nonexistent", "--answer-timeout", "1"], environment: noBus)
            XCTAssertEqual(absent.termination, .exited(69), "\(verb): " + absent.standardOutput + absent.standardError)
            XCTAssertTrue((absent.standardOutput + absent.standardError).contains("/nonexistent"), "\(verb): " + absent.standardOutput + absent.standardError)
        }
    }

    /// The states a subscriber wrote to `output`, one a line.
    private static func states(in output: String) throws -> [[String: Any]] {
        try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func testMethodsAnswerAsTheBusAndErrorsAreNamed() throws {
        // Given the daemon
        try startDaemon()
        let socket = try socket

        // When the Python client calls the methods
        let address = try VarlinkPeer.call(socket, "CheckAddress", ["address": "127.0.0.1"])
        let destination = try VarlinkPeer.call(socket, "CheckDestination", ["address": "::1"])
        let explain = try VarlinkPeer.call(socket, "Explain")
        let connectivity = try VarlinkPeer.call(socket, "CheckConnectivity")
        let invalid = try VarlinkPeer.call(socket, "CheckAddress", ["address": "not-an-address"])

        // Then they answer as the bus does, and a malformed address is InvalidAddress
        XCTAssertEqual((address["parameters"] as? [String: String])?["status"], ReachabilityStatus.reachableViaOther.rawValue, "\(address)")
        XCTAssertEqual((address["parameters"] as? [String: String])?["interface"], "lo")
        let dictionary = (destination["parameters"] as? [String: Any])?["destination"] as? [String: String]
        XCTAssertEqual(dictionary?["via"], "direct", "\(destination)")
        XCTAssertEqual(dictionary?["address"], "::1")
        XCTAssertTrue(((explain["parameters"] as? [String: String])?["report"] ?? "").contains("ra0"), "\(explain)")
        XCTAssertEqual((connectivity["parameters"] as? [String: String])?["connectivity"], Connectivity.none.rawValue, "\(connectivity)")
        XCTAssertEqual(invalid["error"] as? String, "org.reachabilityd.Reachability.InvalidAddress")
        XCTAssertEqual((invalid["parameters"] as? [String: String])?["address"], "not-an-address")

        // And on a raw connection: the service's errors, each answered on the same connection
        let raw = try RawVarlinkConnection(path: socket)
        for (call, error) in [
            (#"{"method":"org.reachabilityd.Reachability.Subscribe"}"#, "org.varlink.service.ExpectedMore"),
            (#"{"method":"org.reachabilityd.Reachability.Nope"}"#, "org.varlink.service.MethodNotFound"),
            (#"{"method":"org.example.Nope.GetState"}"#, "org.varlink.service.InterfaceNotFound"),
            (#"{"method":"org.reachabilityd.Reachability.CheckAddress","parameters":{"address":7}}"#, "org.varlink.service.InvalidParameter"),
        ] {
            raw.send(message: call)
            XCTAssertEqual(try raw.receive()?["error"] as? String, error, call)
        }
    }

    func testHostileMessagesGetAnErrorAndAClosedConnectionAndOthersAreStillServed() throws {
        // Given the daemon
        try startDaemon()
        let socket = try socket
        let cases: [(String, (RawVarlinkConnection) -> Void)] = [
            ("malformed JSON", { $0.send(message: #"{"method": "#) }),
            ("not UTF-8", { $0.send(Array(#"{"method":"org.reachabilityd.Reachability.CheckAddress","parameters":{"address":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8) + [0]) }),
            ("oversized", { $0.send(Array(repeating: UInt8(ascii: " "), count: VarlinkContract.callSizeLimit + 4096)) }),
            ("truncated", { connection in
                connection.send(Array(#"{"method":"org.reachabilityd.Reachability.GetState""#.utf8))
                connection.shutDownSending()
            }),
        ]
        for (name, send) in cases {
            // When a peer sends it
            let connection = try RawVarlinkConnection(path: socket)
            send(connection)
            // Then it gets InvalidMessage, and the connection closes
            XCTAssertEqual(try connection.receive()?["error"] as? String, "org.reachabilityd.Reachability.InvalidMessage", name)
            XCTAssertTrue(try connection.isClosedByDaemon(), name)
        }

        // And the daemon still answers
        let reply = try VarlinkPeer.call(socket, "GetState")
        XCTAssertNotNil(reply["parameters"], "\(reply)")
        XCTAssertNil(daemon?.termination)
    }

    func testAFloodOfConnectionsFromOneUserIsBoundedAndDelaysNobodyElse() throws {
        // Given the daemon, and its socket reachable by an unprivileged user
        try startDaemon()
        let socket = try socket
        chmod(try XCTUnwrap(directory).path, 0o711)
        chmod(try XCTUnwrap(directory).file("runtime"), 0o711)

        // When nobody opens more connections than a user may, and holds them open
        let held = try XCTUnwrap(directory).file("held")
        let flood = """
            import socket, sys, time
            held, refused = [], 0
            for _ in range(\(300)):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                reply = b""
                try:
                    s.sendall(b'{"method":"org.reachabilityd.Reachability.GetState"}\\0')
                    while not reply.endswith(b"\\0"):
                        chunk = s.recv(65536)
                        if not chunk: break
                        reply += chunk
                except OSError:
                    pass
                if b'"parameters":{"state"' in reply: held.append(s)
                else: refused += 1
            print(len(held), refused, flush=True)
            time.sleep(600)
            """
        let flooder = try ChildProcess("setpriv", try Self.setprivArguments(user: "nobody") + [FaultInjection.python, "-c", flood, socket],
                                       standardOutput: held, standardError: try XCTUnwrap(directory).file("flood.err"))
        defer { _ = flooder.terminate() }
        let counts = try Poll.until("the flood's connections", observe: { (try? String(contentsOfFile: held, encoding: .utf8)) ?? "" }) {
            if let ended = flooder.poll() {
                throw HarnessError("the flood ended (\(ended)): \((try? String(contentsOfFile: try XCTUnwrap(self.directory).file("flood.err"), encoding: .utf8)) ?? "")")
            }
            return $0.hasSuffix("\n")
        }

        // Then the user got its limit of connections answered and the rest Busy
        XCTAssertEqual(counts, "128 172\n")
        // and another caller is answered while they are held
        let reply = try VarlinkPeer.call(socket, "GetState")
        XCTAssertNotNil(reply["parameters"], "\(reply)")
    }
}
