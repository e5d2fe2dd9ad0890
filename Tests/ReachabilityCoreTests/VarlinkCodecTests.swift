import Foundation
import ReachabilityCore
import ReachabilityProperties
import TestSupport
import XCTest

/// The Varlink codec: framing at NULs, calls decoded and checked against the interfaces,
/// replies and errors encoded; the IDL file is what the daemon serves; and the fuzzer's corpus
/// and crashers replayed through ``VarlinkCallOracle``.
final class VarlinkCodecTests: XCTestCase {
    private static let state = "org.reachabilityd.Reachability.GetState"

    func testCallsDecodeToWhatTheyAsk() {
        let rows: [(given: String, then: Result<VarlinkRequest, VarlinkError>, line: UInt)] = [
            (#"{"method":"org.reachabilityd.Reachability.GetState"}"#, .success(.getState), #line),
            (#"{"method":"org.reachabilityd.Reachability.GetState","parameters":{}}"#, .success(.getState), #line),
            (#"{"method":"org.reachabilityd.Reachability.GetState","parameters":null,"more":null}"#, .success(.getState), #line),
            (#"{"method":"org.reachabilityd.Reachability.Subscribe","more":true}"#, .success(.subscribe), #line),
            (#"{"method":"org.reachabilityd.Reachability.Subscribe"}"#, .failure(.expectedMore), #line),
            (#"{"method":"org.reachabilityd.Reachability.CheckAddress","parameters":{"address":"::1"}}"#, .success(.checkAddress("::1")), #line),
            (#"{"method":"org.reachabilityd.Reachability.CheckAddress","parameters":{"address":1}}"#, .failure(.invalidParameter("address")), #line),
            (#"{"method":"org.reachabilityd.Reachability.CheckAddress"}"#, .failure(.invalidParameter("address")), #line),
            (#"{"method":"org.reachabilityd.Reachability.CheckDestination","parameters":{"address":"x"}}"#, .success(.checkDestination("x")), #line),
            (#"{"method":"org.reachabilityd.Reachability.CheckConnectivity"}"#, .success(.checkConnectivity), #line),
            (#"{"method":"org.reachabilityd.Reachability.Explain","future":1}"#, .success(.explain), #line),
            (#"{"method":"org.reachabilityd.Reachability.Explain","upgrade":true}"#, .failure(.invalidParameter("upgrade")), #line),
            (#"{"method":"org.reachabilityd.Reachability.Metrics"}"#, .success(.metrics), #line),
            (#"{"method":"org.reachabilityd.Reachability.Reload"}"#, .failure(.methodNotFound("org.reachabilityd.Reachability.Reload")), #line),
            (#"{"method":"org.reachabilityd.Reachability1.GetState"}"#, .failure(.interfaceNotFound("org.reachabilityd.Reachability1")), #line),
            (#"{"method":"GetState"}"#, .failure(.interfaceNotFound("")), #line),
            (#"{"method":"org.varlink.service.GetInfo"}"#, .success(.getInfo), #line),
            (#"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"org.varlink.service"}}"#,
             .success(.getInterfaceDescription(interface: "org.varlink.service")), #line),
            (#"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"io.systemd.Network"}}"#,
             .failure(.interfaceNotFound("io.systemd.Network")), #line),
        ]
        for row in rows {
            // Given a message, When it is decoded and routed
            let request = Result { () throws(VarlinkError) -> VarlinkRequest in try VarlinkRequest(VarlinkCall(decoding: ArraySlice(row.given.utf8))) }
            // Then it asks what the row says, or is answered with its error
            XCTAssertEqual(request, row.then, row.given, line: row.line)
        }
    }

    func testTheStateKeysTheIDLNamesAreThePropertyTablesJSONKeys() throws {
        // Given the IDL's comment above GetState, which names the state's keys by hand
        let comment = VarlinkContract.interfaceDescription.components(separatedBy: "\nmethod GetState()")[0]
            .components(separatedBy: "keyed as `reachabilityctl status --json` keys them:").last ?? ""
        let words = comment.replacingOccurrences(of: "#", with: " ").components(separatedBy: CharacterSet(charactersIn: " ,\n"))

        // Then every JSON key of the property table is named there, Generation's included
        let keys = ReachabilityProperty.allCases.compactMap(\.definition.jsonKey) + [VarlinkContract.generationKey]
        XCTAssertEqual(keys.filter { !words.contains($0) }, [], "keys the IDL's GetState comment does not name")
    }

    func testMessagesThatAreNoCallAreRefused() {
        let rows: [(given: [UInt8], line: UInt)] = [
            (Array(#"{"method":"org.reachabilityd.Reachability.CheckAddress","parameters":{"address":""#.utf8) + [0xFF, 0xFE] + Array(#""}}"#.utf8), #line),
            (Array(#"{"method":"org.reachabilityd.Reachability.GetState""#.utf8), #line),
            (Array(#"["org.reachabilityd.Reachability.GetState"]"#.utf8), #line),
            (Array(#"{"method":42}"#.utf8), #line),
            (Array(#"{"method":""}"#.utf8), #line),
            (Array(#"{"method":"org.reachabilityd.Reachability.GetState","parameters":[]}"#.utf8), #line),
            (Array(#"{"method":"org.reachabilityd.Reachability.Subscribe","more":"yes"}"#.utf8), #line),
            (Array(repeating: UInt8(ascii: "["), count: 100), #line),
            (Array(#"{"method":""#.utf8) + Array(repeating: UInt8(ascii: "A"), count: VarlinkContract.callSizeLimit) + Array(#""}"#.utf8), #line),
        ]
        for row in rows {
            // Given bytes that are no call, When they are decoded
            // Then the error is InvalidMessage
            XCTAssertThrowsError(try VarlinkCall(decoding: row.given[...]), line: row.line) { error in
                guard case .invalidMessage = error as? VarlinkError else { return XCTFail("\(error)", line: row.line) }
            }
        }
    }

    func testTheFramerSplitsAtNULsAndRefusesAnEndlessMessage() throws {
        // Given two calls and the start of a third, arriving byte by byte
        var framer = VarlinkFramer()
        var messages: [String] = []
        for byte in Array("{\"a\":1}\0{}\0{\"b\"".utf8) {
            framer.append([byte])
            while let message = try framer.next() { messages.append(String(decoding: message, as: UTF8.self)) }
        }
        // Then the complete ones come out, and the third waits
        XCTAssertEqual(messages, [#"{"a":1}"#, "{}"])
        XCTAssertTrue(framer.holdsPartialMessage)

        // When more than a call may hold arrives without a NUL
        framer.append(Array(repeating: UInt8(ascii: " "), count: VarlinkContract.callSizeLimit))
        // Then the framer gives up on the connection
        XCTAssertThrowsError(try framer.next())
    }

    func testRepliesAndErrorsAreOneJSONObjectAndANUL() {
        let rows: [(given: [UInt8], then: String, line: UInt)] = [
            (VarlinkReply.encoded(["report": .string("x")]), #"{"parameters":{"report":"x"}}"#, #line),
            (VarlinkReply.encoded(["state": .object([:])], continues: true), #"{"continues":true,"parameters":{"state":{}}}"#, #line),
            (VarlinkError.expectedMore.encoded, #"{"error":"org.varlink.service.ExpectedMore","parameters":{}}"#, #line),
            (VarlinkError.invalidAddress(address: "x", message: "no").encoded,
             #"{"error":"org.reachabilityd.Reachability.InvalidAddress","parameters":{"address":"x","message":"no"}}"#, #line),
            (VarlinkError.busy("later").encoded, #"{"error":"org.reachabilityd.Reachability.Busy","parameters":{"message":"later"}}"#, #line),
        ]
        for row in rows {
            XCTAssertEqual(row.given, Array(row.then.utf8) + [0], line: row.line)
        }
    }

    func testTheStateHasTheJSONKeysOfTheStatusRecordAndGeneration() {
        // Given a snapshot, When it is the Varlink state
        guard case .object(let state) = ReachabilitySnapshot.unknown.varlinkState(generation: 7) else { return XCTFail("not an object") }
        // Then its keys are the property table's JSON keys and generation, with the table's values
        let keys = ReachabilityProperty.allCases.compactMap(\.definition.jsonKey)
        XCTAssertEqual(Set(state.keys), Set(keys + ["generation"]))
        XCTAssertEqual(state["generation"], .number(7))
        XCTAssertEqual(state["status"], .string("unknown"))
        XCTAssertEqual(state["ipv4Access"], .string("none"))
        XCTAssertEqual(state["captivePortalSession"], .object([:]))
    }

    func testAClientReadsBackTheStateTheDaemonSends() throws {
        // Given a published snapshot with every kind of value
        var published = ReachabilitySnapshot.unknown
        published.status = .reachableViaWiFi
        published.isIPv4Reachable = true
        published.interface = "wlan0"
        published.transport = .wifi
        published.isMetered = true
        published.reason = "default route via 192.0.2.1 on wlan0"
        published.nat64Prefix = "64:ff9b::/96"
        // (a count within 32 bits comes back from JSON as `u`, a larger one as `t`)
        published.captivePortalSession = CaptivePortalSession(secondsRemaining: 600, bytesRemaining: 5_000_000_000, venueInfoURL: "https://v/", canExtendSession: false)
        published.interfaces = [
            NetworkInterface(name: "wlan0", index: 3, transport: .wifi, operational: .up, hasIPv4: true, gateways: [IPAddress("192.0.2.1")!]),
            NetworkInterface(name: "eth0", index: 2, transport: .ethernet, operational: .noCarrier, ignoreReason: "no carrier"),
        ]

        // When the daemon sends it as a reply and a client decodes that reply
        let bytes = VarlinkReply.encoded(["state": published.varlinkState(generation: 9)], continues: true)
        let reply = try VarlinkReply(decoding: bytes.dropLast())
        guard case .object(let state)? = reply.parameters["state"] else { return XCTFail("no state in \(reply)") }
        let read = ReachabilitySnapshot(varlinkState: state)

        // Then the client has every published value back
        XCTAssertTrue(reply.continues)
        XCTAssertNil(reply.error)
        for property in ReachabilityProperty.allCases where property != .generation {
            XCTAssertEqual(read.value(of: property, generation: 0), published.value(of: property, generation: 0), property.rawValue)
        }
        XCTAssertEqual(state["generation"], .number(9))
    }

    func testTheServedDescriptionIsTheIDLFileAndNamesTheMethodsServed() throws {
        // Given the IDL beside the D-Bus XML
        let file = FuzzInputs.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/org.reachabilityd.Reachability.varlink")
        let idl = try String(contentsOf: file, encoding: .utf8)
        // Then the daemon serves it word for word, and its methods are those it routes
        XCTAssertEqual(VarlinkContract.interfaceDescription + "\n", idl)
        let methods = idl.split(separator: "\n").filter { $0.hasPrefix("method ") }.map { $0.dropFirst(7).prefix { $0 != "(" } }.map(String.init)
        XCTAssertEqual(methods, VarlinkRequest.interfaceMethods)
        for method in methods {
            let call = VarlinkCall(method: "\(VarlinkContract.interface).\(method)", parameters: ["address": .string("::1")], more: true)
            XCTAssertNoThrow(try VarlinkRequest(call), method)
        }
    }

    func testEverySeedAndCrasherKeepsTheCodecsInvariants() throws {
        // Given the fuzzer's seeds and crashers
        for file in try FuzzInputs.replayed("varlink") {
            let bytes = [UInt8](try Data(contentsOf: file))
            // When a peer sends them, Then every invariant holds
            XCTAssertEqual(VarlinkCallOracle.violations(of: bytes), [], file.lastPathComponent)
            // and the forged ones end in a refusal or a cut-off message, the others in calls
            let last = VarlinkCallOracle.outcomes(of: bytes, pieceSize: bytes.count).last
            let refused: Bool
            switch last {
            case .refused?, .truncated?: refused = true
            default: refused = false
            }
            XCTAssertEqual(refused, file.lastPathComponent.hasPrefix("forged-"), file.lastPathComponent)
        }
    }
}
