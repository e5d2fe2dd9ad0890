#if canImport(Glibc)
import Glibc
#endif
import NetworkTypes
import RTNetlink
import TestSupport
import XCTest

/// The UDP sockets kept between questions answer as new ones would: what one question did to a
/// socket (a zone's device bound, a source chosen, even by a connect that failed) is gone by the
/// next, in a namespace of the test's own.
final class SourceAddressQueryTests: XCTestCase {
    func testThatEachQuestionIsAnsweredAsByANewSocket() throws {
        let namespace = try TestNamespace()
        defer { namespace.delete() }
        try namespace.setIPv6(enabled: true, on: "ra0")
        try namespace.ip("link", "set", "ra1", "up")
        try namespace.ip("link", "set", "ra0", "up")
        try namespace.ip("address", "add", "10.1.1.1/24", "dev", "ra0")
        try namespace.ip("address", "add", "10.9.9.9/32", "dev", "ra0")
        try namespace.ip("route", "add", "192.0.2.0/24", "dev", "ra0")
        try namespace.ip("-6", "address", "add", "2001:db8:1::5/64", "dev", "ra0", "nodad")
        try namespace.ip("-6", "address", "add", "fe80::5/64", "dev", "ra0", "nodad")
        let link = InterfaceIndex(try XCTUnwrap(Int32(namespace.ip("-o", "link", "show", "ra0").split(separator: ":")[0])))

        let name = namespace.name
        let answers = try namespace.runInside { () -> Result<[String], HarnessError> in
            let query = SourceAddressQuery()
            func source(_ text: String, boundTo link: InterfaceIndex? = nil) -> String {
                switch query.source(toward: IPAddress(text)!, boundTo: link) {
                case .success(let address): "\(address)"
                case .failure(let error): "errno \(error.errno)"
                }
            }
            var answers: [String] = []
            // A zone naming no link: the connect fails, with the socket bound to that device.
            answers.append(source("fe80::99", boundTo: InterfaceIndex(9999)))
            answers.append(source("2001:db8:1::1"))
            // A zone's device, and then a global destination again.
            answers.append(source("fe80::99", boundTo: link))
            answers.append(source("2001:db8:1::1"))
            answers.append(source("192.0.2.1"))
            // The route's preferred source changes: the next answer follows it.
            do {
                try Command.run("ip", ["-n", name, "route", "replace", "192.0.2.0/24", "dev", "ra0", "src", "10.9.9.9"]).check()
            } catch {
                return .failure(HarnessError("\(error)"))
            }
            answers.append(source("192.0.2.1"))
            answers.append(source("198.51.100.1"))
            return .success(answers)
        }
        XCTAssertEqual(answers, [
            "errno \(ENETUNREACH)", "2001:db8:1::5", "fe80::5", "2001:db8:1::5", "10.1.1.1", "10.9.9.9", "errno \(ENETUNREACH)",
        ])
    }
}
