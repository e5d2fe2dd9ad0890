@testable import RTNetlink
import XCTest

// Expectations are written as these plain mirrors in the kernel's numbers, as the fixtures
// are, and compared whole (XCTest then prints both sides on failure).

/// The fields of a `NetlinkHeader`.
struct HeaderFields: Equatable {
    var length: UInt32
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    var portID: UInt32
}

extension HeaderFields {
    init(_ header: NetlinkHeader) {
        self.init(length: header.length, type: header.type.rawValue, flags: header.flags.rawValue, sequence: header.sequence, portID: header.portID)
    }
}

/// The fields of a `LinkMessage`.
struct LinkFields: Equatable {
    var index: Int32
    var hardwareType: UInt16
    var flags: UInt32
    var name: String?
    var kind: String?
}

extension LinkFields {
    init(_ link: LinkMessage) {
        self.init(index: link.index.rawValue, hardwareType: link.hardwareType.rawValue, flags: link.flags.rawValue, name: link.name, kind: link.kind)
    }
}

/// The fields of an `AddressMessage`.
struct AddressFields: Equatable {
    var family: UInt8
    var prefixLength: UInt8
    var flags: UInt32
    var scope: UInt8
    var index: Int32
    var address: [UInt8]?
}

extension AddressFields {
    init(_ address: AddressMessage) {
        self.init(
            family: address.family, prefixLength: address.prefixLength, flags: address.flags.rawValue, scope: address.scope,
            index: address.index.rawValue, address: address.address
        )
    }
}

/// The fields of a `RouteMessage`.
struct RouteFields: Equatable {
    var family: UInt8
    var destinationLength: UInt8
    var table: UInt32
    var type: UInt8
    var scope: UInt8
    var flags: UInt32
    var destination: [UInt8]? = nil
    var outputInterface: Int32? = nil
    var gateway: [UInt8]? = nil
    var priority: UInt32? = nil
}

extension RouteFields {
    init(_ route: RouteMessage) {
        self.init(
            family: route.family, destinationLength: route.destinationLength, table: route.table.rawValue, type: route.type.rawValue,
            scope: route.scope, flags: route.flags.rawValue, destination: route.destination, outputInterface: route.outputInterface?.rawValue,
            gateway: route.gateway, priority: route.priority
        )
    }
}

extension RouteNetlinkPayload {
    /// The link of `.newLink` / `.deleteLink`.
    var link: LinkFields? {
        switch self {
        case let .newLink(link), let .deleteLink(link): LinkFields(link)
        default: nil
        }
    }

    /// The address of `.newAddress` / `.deleteAddress`.
    var address: AddressFields? {
        switch self {
        case let .newAddress(address), let .deleteAddress(address): AddressFields(address)
        default: nil
        }
    }

    /// The route of `.newRoute` / `.deleteRoute`.
    var route: RouteFields? {
        switch self {
        case let .newRoute(route), let .deleteRoute(route): RouteFields(route)
        default: nil
        }
    }
}

/// The one message `datagram` holds; fails the test (with the parse error) otherwise.
func parseSingleMessage(_ datagram: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> NetlinkMessage {
    let results = NetlinkParser.parse(datagram: datagram)
    XCTAssertEqual(results.count, 1, "results: \(results)", file: file, line: line)
    return try XCTUnwrap(results.first, file: file, line: line).get()
}

/// The results of `datagram` as payloads and errors (the headers dropped), for whole-list comparisons.
func parseOutcomes(_ datagram: [UInt8]) -> [Result<RouteNetlinkPayload, NetlinkParseError>] {
    NetlinkParser.parse(datagram: datagram).map { $0.map(\.payload) }
}
