import Foundation
import ReachabilityCore
import XCTest

/// An IPv6-only host behind a real NAT64: Debian's tayga on a tun in the router's namespace, in
/// front of an HTTP server reachable over IPv4 only (port 8081, "served over IPv4"); optionally
/// tayga as the host's CLAT. Shared by the daemon's and the clients' tests.
package enum NAT64Testbed {
    /// tayga, unpacked by make deps.
    package static let tayga = TestPaths.tayga
    /// tayga's prefix: not the well-known one, with which tayga (RFC 6052 §3.1) refuses private
    /// IPv4 destinations such as the server's.
    package static let prefix = "2001:db8:64::/96"
    /// The IPv4-only server, on the router's loopback.
    package static let server = IPAddress("10.99.0.1")!
}

extension DaemonTestCase {
    /// A router namespace running tayga in front of the IPv4-only server (``startNAT64(in:)``),
    /// and this test's namespace an IPv6-only host: link-local and fd00::2 on ra0, no IPv4
    /// address, router advertisements accepted while forwarding (for a CLAT); the daemon started.
    package func startIPv6OnlyHostBehindNAT64() throws -> (RouterNamespace, [ChildProcess]) {
        try TestPaths.requireTestTool(NAT64Testbed.tayga)
        let router = try RouterNamespace(linkedTo: try netns)
        let nat64 = try startNAT64(in: router)
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.sysctl("net.ipv6.conf.ra0.accept_ra", "2")
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
        try netns.ip("addr", "add", "fd00::2/64", "dev", "ra0", "nodad")
        try startDaemon()
        return (router, nat64)
    }

    /// Starts tayga as this host's CLAT (tun `clat`, 192.0.0.1 mapped to fd00::c1a7, answered
    /// for on ra0 by proxy NDP) with IPv4's default route through it.
    package func startCLAT() throws -> ChildProcess {
        let configuration = try XCTUnwrap(directory).file("clat.conf")
        try "tun-device clat\nipv4-addr 192.0.0.2\nprefix \(NAT64Testbed.prefix)\nmap 192.0.0.1 fd00::c1a7\ndata-dir \(try XCTUnwrap(directory).path)\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        try Command.run("ip", ["netns", "exec", try netns.name, NAT64Testbed.tayga, "--config", configuration, "--mktun"]).check()
        try netns.sysctl("net.ipv6.conf.all.forwarding", "1")
        try netns.sysctl("net.ipv6.conf.ra0.proxy_ndp", "1")
        try netns.ip("-6", "neigh", "add", "proxy", "fd00::c1a7", "dev", "ra0")
        let clat = try ChildProcess("ip", ["netns", "exec", try netns.name, NAT64Testbed.tayga, "--config", configuration, "--nodetach"],
                                    standardOutput: try XCTUnwrap(directory).file("clat.log"), standardError: try XCTUnwrap(directory).file("clat.log"))
        try netns.ip("link", "set", "clat", "up")
        try netns.ip("addr", "add", "192.0.0.1/32", "dev", "clat")
        try netns.ip("-6", "route", "add", "fd00::c1a7/128", "dev", "clat")
        try netns.ip("route", "add", "default", "dev", "clat")
        return clat
    }

    /// Starts tayga (prefix ``prefix``, pool 10.64.0.0/24 on tun `nat64`) and a python HTTP server
    /// on ``server`` in the router's namespace, forwarding both families; returns both processes.
    private func startNAT64(in router: RouterNamespace) throws -> [ChildProcess] {
        let namespace = router.namespace
        try namespace.sysctl("net.ipv6.conf.all.forwarding", "1")
        try namespace.sysctl("net.ipv4.ip_forward", "1")
        try namespace.ip("link", "set", "lo", "up")
        try namespace.ip("addr", "add", "\(NAT64Testbed.server)/32", "dev", "lo")
        let configuration = router.state.file("tayga.conf")
        try "tun-device nat64\nipv4-addr 10.64.0.1\nprefix \(NAT64Testbed.prefix)\ndynamic-pool 10.64.0.0/24\ndata-dir \(router.state.path)\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        try Command.run("ip", ["netns", "exec", namespace.name, NAT64Testbed.tayga, "--config", configuration, "--mktun"]).check()
        try namespace.ip("link", "set", "nat64", "up")
        try namespace.ip("route", "add", "10.64.0.0/24", "dev", "nat64")
        try namespace.ip("-6", "route", "add", NAT64Testbed.prefix, "dev", "nat64")
        let tayga = try ChildProcess("ip", ["netns", "exec", namespace.name, NAT64Testbed.tayga, "--config", configuration, "--nodetach"],
                                     standardOutput: router.state.file("tayga.log"), standardError: router.state.file("tayga.log"))
        let site = router.state.file("site")
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        try "served over IPv4\n".write(toFile: "\(site)/index.html", atomically: true, encoding: .utf8)
        let server = try ChildProcess("ip", ["netns", "exec", namespace.name, FaultInjection.python, "-m", "http.server", "--bind", "\(NAT64Testbed.server)", "8081",
                                             "--directory", site], standardOutput: router.state.file("http.log"), standardError: router.state.file("http.log"))
        try Poll.until("the IPv4-only server listens") {
            try Command.run("ip", ["netns", "exec", namespace.name, "curl", "-sS", "-m", "1", "-o", "/dev/null", "http://\(NAT64Testbed.server):8081/"]).succeeded
        }
        return [tayga, server]
    }

}
