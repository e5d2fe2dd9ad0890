import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// `CheckConnectivity()` against the check server in a router namespace (testbed/servers/
/// connectivity-server.py behind ra1 at 10.77.0.1), which logs every request: a call runs a
/// check now and replies after it (after the re-check of a failure after `full` too); callers
/// during one check share it; one uid starts at most one
/// check per window; without a check the reply is immediate; the daemon serves other calls
/// while a reply is pending. Checks are scheduled an hour apart, so every request the server
/// sees during a test is one a call started.
final class CheckConnectivityTests: DaemonTestCase {
    /// Checks an hour apart (only calls start them during a test), each given 3 s.
    private let onDemandConfiguration = "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=3600\nCheckTimeoutSec=3\n"

    func testACallChecksNowAndRepliesWhenTheCheckFinished() throws {
        // Given a check that said full, the next one an hour away
        let router = try startDaemonBehindRouter(configuration: onDemandConfiguration)
        try waitForConnectivity(.full)
        let before = router.requests.count

        // When the network becomes a portal and a caller asks
        try router.setMode("redirect")
        let reply = try checkConnectivity()

        // Then a new check ran and the reply is its verdict, already published with its signal
        XCTAssertEqual(reply, Connectivity.portal.rawValue)
        XCTAssertEqual(router.requests.count, before + 1, "\(router.requests)")
        let published = try busctl.properties()
        XCTAssertEqual(published.string(.connectivity), Connectivity.portal.rawValue)
        XCTAssertEqual(published.string(.captivePortal), "http://10.77.0.1:8080/portal")
        try Poll.until("ConnectivityChanged portal") { try signals.connectivityChanges.last == Connectivity.portal.rawValue }

        // When the user logged in (the server answers 204 again) and another user asks
        try router.setMode("204")
        let retry = try checkConnectivity(as: "nobody")

        // Then full, from a check after the change (its own, or the back-off's 1 s after portal
        // when a loaded machine took that long: then it was shared or started another)
        XCTAssertEqual(retry, Connectivity.full.rawValue)
        XCTAssertGreaterThanOrEqual(router.requests.count, before + 2, "\(router.requests)")
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.full.rawValue)
    }

    func testAFailureAfterFullIsCheckedAgainBeforeTheReply() throws {
        // Given full
        let router = try startDaemonBehindRouter(configuration: onDemandConfiguration)
        try waitForConnectivity(.full)
        let before = router.requests.count

        // When the server resets every connection and a caller asks
        try router.setMode("reset")
        let reply = try checkConnectivity()

        // Then the reply waited for the re-check that confirms the failure: limited, two requests
        XCTAssertEqual(reply, Connectivity.limited.rawValue)
        XCTAssertEqual(router.requests.count, before + 2, "\(router.requests)")
    }

    func testCallersDuringOneCheckShareItAndOtherCallsAreServedMeanwhile() throws {
        // Given full, and a server that now takes 1.5 s to answer
        // When root asks, and while its check is at the server, nobody asks too
        let (router, before, first) = try startCheckAtTheServer(mode: "slow")
        let second = try startCheckConnectivity(as: "nobody")

        // Then meanwhile the daemon answers another call at once, both replies still pending
        let asked = ContinuousClock.now
        XCTAssertEqual(try busctl.property(.status), .string(ReachabilityStatus.reachableViaEthernet.rawValue))
        XCTAssertLessThan(ContinuousClock.now - asked, .seconds(1))
        XCTAssertNil(first.process.poll(), "CheckConnectivity replied before its check finished")
        XCTAssertNil(second.process.poll(), "the second caller did not wait for the check in flight")

        // Then both get the one check's answer: one request to the server
        XCTAssertEqual(try reply(of: first), Connectivity.full.rawValue)
        XCTAssertEqual(try reply(of: second), Connectivity.full.rawValue)
        XCTAssertEqual(router.requests.count, before + 1, "\(router.requests)")
    }

    func testOneUserStartsOneCheckPerWindowAnotherUserItsOwn() throws {
        // Given full
        let router = try startDaemonBehindRouter(configuration: onDemandConfiguration)
        try waitForConnectivity(.full)
        let before = router.requests.count

        // When root asks twice, from two connections, and then nobody twice
        XCTAssertEqual(try checkConnectivity(), Connectivity.full.rawValue)
        let afterRoot = router.requests.count
        XCTAssertEqual(try checkConnectivity(), Connectivity.full.rawValue)
        let afterRootAgain = router.requests.count
        XCTAssertEqual(try checkConnectivity(as: "nobody"), Connectivity.full.rawValue)
        let afterNobody = router.requests.count
        XCTAssertEqual(try checkConnectivity(as: "nobody"), Connectivity.full.rawValue)

        // Then each uid's first call sent one request, its second (inside 10 s) none
        XCTAssertEqual([afterRoot, afterRootAgain, afterNobody, router.requests.count], [before + 1, before + 1, before + 2, before + 2], "\(router.requests)")
    }

    func testWithoutACheckTheReplyIsTheCurrentConnectivityAtOnce() throws {
        // Given a reachable host without a check configured
        let router = try startDaemonBehindRouter(configuration: "")
        try waitForProperties("reachable, connectivity unknown") {
            $0.status == ReachabilityStatus.reachableViaEthernet.rawValue && $0.string(.connectivity) == Connectivity.unknown.rawValue
        }

        // When a caller asks
        let asked = ContinuousClock.now
        let reply = try checkConnectivity()

        // Then at once the current Connectivity, and nothing was sent
        XCTAssertEqual(reply, Connectivity.unknown.rawValue)
        XCTAssertLessThan(ContinuousClock.now - asked, .seconds(1))
        XCTAssertEqual(router.requests, [])
    }

    func testOneUsersWaitingCallsAreBoundedAndTheRestAnsweredBusy() throws {
        // Given root's check in flight, which the server never answers (3 s, then 3 s more to confirm)
        let (router, _, first) = try startCheckAtTheServer(mode: "hang")
        defer { withExtendedLifetime(router) {} }

        // When user nobody makes more calls than it may have waiting, on one connection
        let answers = try manyCheckConnectivityCalls(as: "nobody", count: OnDemandCheckGate.waitingCallsPerCaller + 8)

        // Then the ones over the bound were answered Busy, the others waited for the check
        XCTAssertEqual(answers[BusContract.busyError], 8, "\(answers)")
        XCTAssertEqual(answers[Connectivity.limited.rawValue], OnDemandCheckGate.waitingCallsPerCaller, "\(answers)")
        XCTAssertEqual(try reply(of: first), Connectivity.limited.rawValue)
    }

    func testTheWaitingCallsOfAConnectionThatLeftAreDropped() throws {
        // Given root's check in flight, which the server never answers
        let (router, _, first) = try startCheckAtTheServer(mode: "hang")
        defer { withExtendedLifetime(router) {} }

        // When user nobody makes every call it may have waiting and leaves the bus, then asks
        // again from a new connection
        _ = try manyCheckConnectivityCalls(as: "nobody", count: OnDemandCheckGate.waitingCallsPerCaller, leaving: true)
        let answers = try manyCheckConnectivityCalls(as: "nobody", count: OnDemandCheckGate.waitingCallsPerCaller)

        // Then the calls of the connection that left counted no more: none was Busy
        XCTAssertEqual(answers, [Connectivity.limited.rawValue: OnDemandCheckGate.waitingCallsPerCaller], "\(answers)")
        XCTAssertEqual(try reply(of: first), Connectivity.limited.rawValue)
    }

    // MARK: - Callers

    /// Full; then the server in `mode`, and root's call, whose check is at the server (`before`:
    /// the requests it had seen until then).
    private func startCheckAtTheServer(mode: String) throws -> (router: RouterNamespace, before: Int, call: (process: ChildProcess, output: String)) {
        let router = try startDaemonBehindRouter(configuration: onDemandConfiguration)
        try waitForConnectivity(.full)
        let before = router.requests.count
        try router.setMode(mode)
        let call = try startCheckConnectivity(as: nil)
        try Poll.until("the check at the server") { router.requests.count == before + 1 }
        return (router, before, call)
    }

    /// A `busctl call … CheckConnectivity` running as `user` (nil: root), its output in a file.
    private func startCheckConnectivity(as user: String?) throws -> (process: ChildProcess, output: String) {
        let directory = try XCTUnwrap(directory)
        let output = directory.file("check-connectivity-\(UUID().uuidString).out")
        let command = [
            "busctl", "--address=\(try XCTUnwrap(bus).address)", "--timeout=20", "call", BusContract.busName, BusContract.objectPath,
            BusContract.interface, BusContract.checkConnectivityMethod,
        ]
        guard let user else { return (try ChildProcess(command[0], Array(command.dropFirst()), standardOutput: output, standardError: output), output) }
        // The bus socket is in the test's directory: let the user reach it.
        if chmod(directory.path, 0o755) != 0 { throw HarnessError.lastError("chmod \(directory.path)") }
        return (try ChildProcess("setpriv", try Self.setprivArguments(user: user) + command, standardOutput: output, standardError: output), output)
    }

    /// The connectivity word the call replied (`s "full"`).
    private func reply(of call: (process: ChildProcess, output: String)) throws -> String {
        let ended = call.process.wait(timeout: .seconds(20))
        let text = (try? String(contentsOfFile: call.output, encoding: .utf8)) ?? ""
        guard ended == .exited(0), text.hasPrefix("s \""), let word = text.split(separator: "\"").dropFirst().first else {
            throw HarnessError("CheckConnectivity failed (\(ended.map { "\($0)" } ?? "still running")): \(text)")
        }
        return String(word)
    }

    /// Makes `count` `CheckConnectivity()` calls at once as `user`, from one connection (Gio, in
    /// Python), and counts their answers: each reply's word, each error's name. `leaving`: the
    /// connection leaves the bus once the daemon took them all (a `CheckAddress` behind them
    /// answered), and nothing is counted.
    private func manyCheckConnectivityCalls(as user: String, count: Int, leaving: Bool = false) throws -> [String: Int] {
        let directory = try XCTUnwrap(directory)
        let script = directory.file("many-calls.py"), output = directory.file("many-calls-\(UUID().uuidString).out")
        try """
            import collections, os, sys
            from gi.repository import Gio, GLib
            address, count, leaving = sys.argv[1], int(sys.argv[2]), sys.argv[3] == 'leave'
            flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
            connection = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
            answers, loop = collections.Counter(), GLib.MainLoop()
            def answered(connection, result):
                try:
                    answers[connection.call_finish(result).unpack()[0]] += 1
                except GLib.Error as error:
                    answers[Gio.DBusError.get_remote_error(error)] += 1
                if sum(answers.values()) == count:
                    loop.quit()
            for _ in range(count):
                connection.call('\(BusContract.busName)', '\(BusContract.objectPath)', '\(BusContract.interface)',
                                '\(BusContract.checkConnectivityMethod)', None, None, Gio.DBusCallFlags.NONE, 30000, None, answered)
            if leaving:
                connection.call_sync('\(BusContract.busName)', '\(BusContract.objectPath)', '\(BusContract.interface)',
                                     '\(BusContract.checkAddressMethod)', GLib.Variant('(s)', ('127.0.0.1',)), None, Gio.DBusCallFlags.NONE, 30000, None)
                os._exit(0)
            loop.run()
            for answer, number in answers.items():
                print(answer, number)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        // The bus socket is in the test's directory: let the user reach it.
        if chmod(directory.path, 0o755) != 0 { throw HarnessError.lastError("chmod \(directory.path)") }
        let arguments = try Self.setprivArguments(user: user) + ["/usr/bin/python3", script, try XCTUnwrap(bus).address, String(count), leaving ? "leave" : "wait"]
        let process = try ChildProcess("setpriv", arguments, standardOutput: output, standardError: output)
        let ended = process.wait(timeout: .seconds(40))
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard ended == .exited(0) else { throw HarnessError("the calls failed (\(ended.map { "\($0)" } ?? "still running")): \(text)") }
        return Dictionary(uniqueKeysWithValues: text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 2 ? (String(fields[0]), Int(fields[1]) ?? 0) : nil
        })
    }

    /// Calls `CheckConnectivity()` as `user` (nil: root) and returns its reply.
    private func checkConnectivity(as user: String? = nil) throws -> String {
        try reply(of: try startCheckConnectivity(as: user))
    }
}
