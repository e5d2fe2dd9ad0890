import ReachabilityCore
import XCTest

/// The NAT64 prefixes systemd-networkd records (`NDisc.PREF64` in `Link.Describe()`'s JSON), in
/// the shapes its versions write.
final class NetworkdPREF64Tests: XCTestCase {
    /// `64:ff9b::` and `fe80::1` as networkd writes an `in6_addr`: 16 byte values.
    private static let wellKnownBytes = "[0,100,255,155,0,0,0,0,0,0,0,0,0,0,0,0]"
    private static let routerBytes = "[254,128,0,0,0,0,0,0,0,0,0,0,0,0,0,1]"

    func testThatEachSystemdVersionsShapeAndEachPrefixLengthIsRead() {
        let wellKnown = NetworkdPREF64(network: IPAddress("64:ff9b::")!, length: 96, router: IPAddress("fe80::1")!, lifetimeEndSeconds: 4_061.5)
        let rows: [(json: String, records: [NetworkdPREF64], line: UInt)] = [
            // systemd 252 (Debian 12), or UsePREF64=no: no NDisc, or no PREF64 in it
            (#"{"Index":2,"Name":"eth0","CaptivePortal":"https://portal.example/api"}"#, [], #line),
            (#"{"Index":2,"NDisc":{"DNS":[]}}"#, [], #line),
            // systemd 255/256: byte arrays only
            (#"{"Index":2,"NDisc":{"PREF64":[{"Prefix":\#(Self.wellKnownBytes),"PrefixLength":96,"LifetimeUSec":4061500000,"ConfigProvider":\#(Self.routerBytes)}]}}"#,
             [wellKnown], #line),
            // systemd 257 (Debian 13): the arrays and their strings
            (#"{"NDisc":{"PREF64":[{"Prefix":\#(Self.wellKnownBytes),"PrefixString":"64:ff9b::","PrefixLength":96,"LifetimeUSec":4061500000,"#
                + #""ConfigProvider":\#(Self.routerBytes),"ConfigProviderString":"fe80::1"}]}}"#, [wellKnown], #line),
            // only the string (a later version dropping the array), no router, no lifetime
            (#"{"NDisc":{"PREF64":[{"PrefixString":"2001:db8:64::","PrefixLength":64}]}}"#,
             [NetworkdPREF64(network: IPAddress("2001:db8:64::")!, length: 64, router: nil, lifetimeEndSeconds: nil)], #line),
            // every length RFC 6052 allows, two routers; invalid elements skipped
            (#"{"NDisc":{"PREF64":[{"PrefixString":"2001:db8:1::","PrefixLength":56},{"PrefixString":"2001:db8::","PrefixLength":48},"#
                + #"{"PrefixString":"2001:db8::","PrefixLength":40},{"PrefixString":"2001:db8::","PrefixLength":32},"#
                + #"{"PrefixString":"2001:db8::","PrefixLength":33},{"PrefixString":"192.0.2.0","PrefixLength":96},"#
                + #"{"Prefix":[1,2,3],"PrefixLength":96},{"PrefixLength":96},"none"]}}"#,
             [NetworkdPREF64(network: IPAddress("2001:db8:1::")!, length: 56, router: nil, lifetimeEndSeconds: nil),
              NetworkdPREF64(network: IPAddress("2001:db8::")!, length: 48, router: nil, lifetimeEndSeconds: nil),
              NetworkdPREF64(network: IPAddress("2001:db8::")!, length: 40, router: nil, lifetimeEndSeconds: nil),
              NetworkdPREF64(network: IPAddress("2001:db8::")!, length: 32, router: nil, lifetimeEndSeconds: nil)], #line),
        ]
        for row in rows {
            guard case .object(let link)? = JSONValue.parse(Array(row.json.utf8)) else { return XCTFail("not an object", line: row.line) }
            XCTAssertEqual(NetworkdPREF64.records(inLinkDescription: link), row.records, line: row.line)
        }
    }
}
