import Foundation
import ReachabilityBus
import ReachabilityCore
import ReachabilityProperties

/// One D-Bus value as `busctl --json=short` prints it: `{"type":"s","data":"…"}`.
package struct BusctlValue: Decodable, Hashable, CustomStringConvertible {
    /// The value's D-Bus signature.
    package var signature: String
    /// The value, for the types a ``BusValue`` represents; nil for any other type.
    package var value: BusValue?

    private enum CodingKeys: String, CodingKey {
        case type, data
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signature = try container.decode(String.self, forKey: .type)
        switch signature {
        case "s": value = .string(try container.decode(String.self, forKey: .data))
        case "b": value = .boolean(try container.decode(Bool.self, forKey: .data))
        case "u": value = .unsigned32(try container.decode(UInt32.self, forKey: .data))
        case "t": value = .unsignedInteger(try container.decode(UInt64.self, forKey: .data))
        case "as": value = .strings(try container.decode([String].self, forKey: .data))
        case "a{sv}": value = .dictionary(try container.decode([String: BusctlValue].self, forKey: .data).compactMapValues(\.value))
        case "aa{sv}": value = .dictionaries(try container.decode([[String: BusctlValue]].self, forKey: .data).map { $0.compactMapValues(\.value) })
        default: value = nil
        }
    }

    package var description: String {
        switch value {
        case .string(let text): "s \"\(text)\""
        case .boolean(let flag): "b \(flag)"
        case .unsigned32(let number): "u \(number)"
        case .unsignedInteger(let number): "t \(number)"
        case let container?: "\(signature) \(container.json.text)"
        case nil: "\(signature) …"
        }
    }
}

/// The daemon's properties, read in one `GetAll` call (one consistent snapshot).
package struct PublishedProperties: CustomStringConvertible {
    /// The values by property name.
    package var values: [String: BusctlValue]

    /// The value of `property`, if published with a supported type.
    package subscript(property: ReachabilityProperty) -> BusValue? {
        values[property.rawValue]?.value
    }

    /// The value of a string property.
    package func string(_ property: ReachabilityProperty) -> String? {
        if case .string(let text) = self[property] { return text }
        return nil
    }

    /// The value of a boolean property.
    package func bool(_ property: ReachabilityProperty) -> Bool? {
        if case .boolean(let flag) = self[property] { return flag }
        return nil
    }

    /// `Status`.
    package var status: String? { string(.status) }

    /// `Interfaces`, as the client reads its entries; empty when not published.
    package var interfaces: [NetworkInterface] {
        (self[.interfaces]?.dictionaries ?? []).compactMap(NetworkInterface.init(busDictionary:))
    }

    /// `CaptivePortalSession`, as the client reads it; empty when not published.
    package var captivePortalSession: CaptivePortalSession {
        self[.captivePortalSession].map(CaptivePortalSession.init(busValue:)) ?? CaptivePortalSession()
    }

    /// `Generation`.
    package var generation: UInt64? {
        if case .unsignedInteger(let number) = self[.generation] { return number }
        return nil
    }

    package var description: String {
        values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: ", ")
    }
}

/// The answer to `CheckAddress`: a reply, or a D-Bus error.
package enum CheckAddressReply: Equatable, CustomStringConvertible {
    /// The method returned `(status, interface)`.
    case reply(status: String, interface: String)
    /// The method failed with a D-Bus error.
    case error(name: String, message: String)

    package var description: String {
        switch self {
        case .reply(let status, let interface): "(\"\(status)\", \"\(interface)\")"
        case .error(let name, let message): "error \(name): \(message)"
        }
    }
}

/// Talks to the daemon over the private bus with `busctl`, and `dbus-send` where busctl falls
/// short (`busctl call` prints only an error's message, not its name).
package struct Busctl {
    /// The bus address, `unix:path=…`.
    package let address: String

    /// Talks to the bus at `address` (the daemon's, or another the test started).
    package init(address: String) {
        self.address = address
    }

    /// Runs `busctl --address=ADDRESS ARGUMENTS…`.
    ///
    /// - Parameter arguments: the busctl command and its arguments.
    /// - Returns: the outcome, unchecked.
    /// - Throws: `HarnessError` when busctl cannot run.
    package func run(_ arguments: [String]) throws -> CommandResult {
        try Command.run("busctl", ["--address=\(address)"] + arguments)
    }

    /// The owner of the daemon's bus name, or nil when nobody owns it.
    ///
    /// - Throws: `HarnessError` when busctl cannot run.
    package func daemonNameOwner() throws -> String? {
        let result = try run([
            "--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "GetNameOwner", "s", BusContract.busName,
        ])
        guard result.succeeded else { return nil }
        struct Reply: Decodable { var data: [String] }
        return try JSONDecoder().decode(Reply.self, from: Data(result.standardOutput.utf8)).data.first
    }

    /// Reads one property with `busctl get-property`.
    ///
    /// - Parameter property: the property.
    /// - Returns: its value.
    /// - Throws: `HarnessError` when the call fails or the type is not one the interface uses.
    package func property(_ property: ReachabilityProperty) throws -> BusValue {
        let output = try run([
            "--json=short", "get-property", BusContract.busName, BusContract.objectPath, BusContract.interface,
            property.rawValue,
        ]).check().standardOutput
        let decoded = try JSONDecoder().decode(BusctlValue.self, from: Data(output.utf8))
        guard let value = decoded.value else {
            throw HarnessError("\(property.rawValue) has unexpected type \(decoded.signature)")
        }
        return value
    }

    /// Reads every property at once (`org.freedesktop.DBus.Properties.GetAll`).
    ///
    /// - Returns: the properties.
    /// - Throws: `HarnessError` when the call fails.
    package func properties() throws -> PublishedProperties {
        struct Reply: Decodable { var data: [[String: BusctlValue]] }
        let output = try run([
            "--json=short", "call", BusContract.busName, BusContract.objectPath, "org.freedesktop.DBus.Properties",
            "GetAll", "s", BusContract.interface,
        ]).check().standardOutput
        let reply = try JSONDecoder().decode(Reply.self, from: Data(output.utf8))
        return PublishedProperties(values: reply.data.first ?? [:])
    }

    /// Calls `CheckAddress(address)`.
    ///
    /// Uses `dbus-send`, which prints a D-Bus error's name; `busctl call` prints only the message.
    ///
    /// - Parameters:
    ///   - text: the address argument.
    ///   - user: the unprivileged user to call as (`setpriv`; the bus socket's directory must
    ///     let it in), nil for root.
    /// - Returns: the reply or the error.
    /// - Throws: `HarnessError` when the output is neither.
    package func checkAddress(_ text: String, as user: String? = nil) throws -> CheckAddressReply {
        let call = [
            "dbus-send", "--bus=\(address)", "--print-reply", "--reply-timeout=5000", "--dest=\(BusContract.busName)",
            BusContract.objectPath, "\(BusContract.interface).\(BusContract.checkAddressMethod)", "string:\(text)",
        ]
        let result = try user.map { try Command.run("setpriv", try DaemonTestCase.setprivArguments(user: $0) + call) }
            ?? Command.run(call[0], Array(call.dropFirst()))
        if result.succeeded {
            let strings = result.standardOutput.split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.hasPrefix("string \"") && $0.hasSuffix("\"") }
                .map { String($0.dropFirst("string \"".count).dropLast()) }
            guard strings.count == 2 else {
                throw HarnessError("CheckAddress returned an unexpected reply: \(result.standardOutput)")
            }
            return .reply(status: strings[0], interface: strings[1])
        }
        // "Error org.example.Error.Name: message"
        let line = result.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix("Error "), let colon = line.firstIndex(of: ":") else {
            throw HarnessError("`\(result.commandLine)` failed (\(result.termination)): \(line)")
        }
        let name = line[line.index(line.startIndex, offsetBy: "Error ".count)..<colon]
        let message = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        return .error(name: String(name), message: message)
    }

    /// Calls `CheckDestination(address)` with `busctl` and returns its dictionary's strings.
    ///
    /// - Throws: `HarnessError` when the call fails or the reply is not an `a{sv}`.
    package func checkDestination(_ text: String) throws -> [String: String] {
        struct Reply: Decodable { var data: [[String: BusctlValue]] }
        let output = try run([
            "--json=short", "call", BusContract.busName, BusContract.objectPath, BusContract.interface, BusContract.checkDestinationMethod, "s", text,
        ]).check().standardOutput
        guard let dictionary = try JSONDecoder().decode(Reply.self, from: Data(output.utf8)).data.first else {
            throw HarnessError("CheckDestination returned an unexpected reply: \(output)")
        }
        return dictionary.compactMapValues { $0.value?.string }
    }

    /// The daemon's live introspection data (`busctl introspect --xml-interface`).
    ///
    /// - Returns: the XML text.
    /// - Throws: `HarnessError` when the call fails.
    package func introspectionXML() throws -> String {
        try run(["introspect", "--xml-interface", BusContract.busName, BusContract.objectPath]).check().standardOutput
    }

    /// Emits a signal with one string argument (`busctl emit`), e.g. a marker for `SignalRecorder`.
    ///
    /// - Parameters:
    ///   - path: the object path.
    ///   - interface: the interface.
    ///   - member: the signal name.
    ///   - argument: its string argument.
    /// - Throws: `HarnessError` when busctl fails.
    package func emit(path: String, interface: String, member: String, argument: String) throws {
        try run(["emit", path, interface, member, "s", argument]).check()
    }
}
