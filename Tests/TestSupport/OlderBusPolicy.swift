import Foundation
import ReachabilityCore
import XCTest

extension DaemonTestCase {
    /// Reloads the test's bus with the policy of a daemon that predates `CheckDestination`: the
    /// shipped policy file without its allow rule, so that the bus refuses the call
    /// (`AccessDenied`) as a system bus with an older package's policy does.
    ///
    /// - Throws: `HarnessError` when a file cannot be written or the bus does not reload.
    package func reloadBusPolicyWithoutCheckDestination() throws {
        let directory = try XCTUnwrap(directory)
        let shipped = "\(TestPaths.dbusDirectory)/org.reachabilityd.Reachability1.conf"
        let allowRule = "send_interface=\"\(BusContract.interface)\" send_member=\"\(BusContract.checkDestinationMethod)\"/>"
        let policy = try String(contentsOfFile: shipped, encoding: .utf8)
        guard policy.contains(allowRule) else { throw HarnessError("\(shipped) has no rule allowing CheckDestination") }
        try policy.replacingOccurrences(of: allowRule, with: "send_interface=\"none.such\"/>")
            .write(toFile: directory.file("older.conf"), atomically: true, encoding: .utf8)
        let configuration = try String(contentsOfFile: directory.file("bus.conf"), encoding: .utf8)
        try configuration.replacingOccurrences(of: shipped, with: directory.file("older.conf"))
            .write(toFile: directory.file("bus.conf"), atomically: true, encoding: .utf8)
        try busctl.run(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReloadConfig"]).check()
    }
}
