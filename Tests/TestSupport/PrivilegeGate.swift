import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Decides whether the privileged integration tests may run here.
package enum PrivilegeGate {
    /// Why the tests need privilege.
    package static let reason = "needs root for network namespaces"

    /// Lets the test go on only as root.
    ///
    /// Unprivileged, the test is skipped; but with `CI=true` a missing privilege means a broken CI
    /// set-up, so the test fails instead.
    ///
    /// - Throws: `XCTSkip` when not root; `HarnessError` (after `XCTFail`) when not root on CI.
    package static func requireRoot(file: StaticString = #filePath, line: UInt = #line) throws {
        guard geteuid() != 0 else { return }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail("\(reason), and CI=true makes a missing privilege a failure", file: file, line: line)
            throw HarnessError("not root (euid \(geteuid()))")
        }
        throw XCTSkip(reason)
    }
}
