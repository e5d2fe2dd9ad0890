import ReachabilityBus
import ReachabilityCore

// The property table of interface `org.reachabilityd.Reachability1`: each published value is
// declared here once — its D-Bus name (the case), its signature, how it is read from a snapshot,
// how a client writes it back into one, and its `--json` key. The daemon's vtable, its
// `PropertiesChanged` and `GetAll`, the client's snapshot, `reachabilityctl status --json` and
// the contract test (against dbus/org.reachabilityd.Reachability1.xml) all follow this table.
// A new property: its line in the XML, its case and its entry here, the snapshot field it reads
// (with a default value) where the engine computes it, and a line in README.

/// The properties of interface `org.reachabilityd.Reachability1`, in the order of the XML;
/// raw values are the D-Bus names. Each one's signature, value and JSON key are its ``definition``.
public enum ReachabilityProperty: String, Sendable, CaseIterable, Hashable {
    /// `Status` (s).
    case status = "Status"
    /// `Reachable` (b).
    case reachable = "Reachable"
    /// `IPv4Reachable` (b).
    case ipv4Reachable = "IPv4Reachable"
    /// `IPv6Reachable` (b).
    case ipv6Reachable = "IPv6Reachable"
    /// `Interface` (s).
    case interface = "Interface"
    /// `Transport` (s).
    case transport = "Transport"
    /// `Metered` (b).
    case metered = "Metered"
    /// `Reason` (s).
    case reason = "Reason"
    /// `Generation` (t).
    case generation = "Generation"
    /// `Connectivity` (s): the better family's ``Connectivity``.
    case connectivity = "Connectivity"
    /// `IPv4Connectivity` (s).
    case ipv4Connectivity = "IPv4Connectivity"
    /// `IPv6Connectivity` (s).
    case ipv6Connectivity = "IPv6Connectivity"
    /// `CaptivePortal` (s): the portal's URL, or "".
    case captivePortal = "CaptivePortal"
    /// `IPv4Interface` (s): the interface of IPv4's route, or "".
    case ipv4Interface = "IPv4Interface"
    /// `IPv6Interface` (s): the interface of IPv6's route, or "".
    case ipv6Interface = "IPv6Interface"
    /// `IPv4Transport` (s): the transport of `IPv4Interface`, or "".
    case ipv4Transport = "IPv4Transport"
    /// `IPv6Transport` (s): the transport of `IPv6Interface`, or "".
    case ipv6Transport = "IPv6Transport"
    /// `Interfaces` (aa{sv}): every link but loopback, in index order, each a ``NetworkInterface``.
    case interfaces = "Interfaces"
    /// `DNS` (s): whether names will resolve, a ``DNSReadiness``.
    case dns = "DNS"
    /// `NAT64Prefix` (s): the NAT64 prefix in use, or "".
    case nat64Prefix = "NAT64Prefix"
    /// `IPv4Access` (s): none, native, clat or nat64.
    case ipv4Access = "IPv4Access"
    /// `MeteredReason` (s): which rule decided `Metered`, a ``MeteredReason``.
    case meteredReason = "MeteredReason"
    /// `NetworkID` (s): the opaque id of the network the route leads into, or "".
    case networkID = "NetworkID"
    /// `CaptivePortalSession` (a{sv}): the keys of RFC 8908's session the network's API gave,
    /// a ``CaptivePortalSession``.
    case captivePortalSession = "CaptivePortalSession"

    /// The property's entry in the table.
    public var definition: PropertyDefinition {
        switch self {
        case .status: .string(json: "status", { $0.status.rawValue }, write: { $0.status = ReachabilityStatus(rawValue: $1) ?? .unknown })
        case .reachable: .boolean(json: "reachable", { $0.isReachable })
        case .ipv4Reachable: .boolean(json: "ipv4Reachable", { $0.isIPv4Reachable }, write: { $0.isIPv4Reachable = $1 })
        case .ipv6Reachable: .boolean(json: "ipv6Reachable", { $0.isIPv6Reachable }, write: { $0.isIPv6Reachable = $1 })
        case .interface: .string(json: "interface", { $0.interface }, write: { $0.interface = $1 })
        case .transport: .string(json: "transport", { $0.transport?.rawValue ?? "" }, write: { $0.transport = Transport(rawValue: $1) })
        case .metered: .boolean(json: "metered", { $0.isMetered }, write: { $0.isMetered = $1 })
        case .reason: .string(json: "reason", { $0.reason }, write: { $0.reason = $1 })
        case .generation: PropertyDefinition(signature: "t", jsonKey: nil, read: { _, generation in .unsignedInteger(generation) })
        case .connectivity: .string(json: "connectivity", { $0.connectivity.rawValue })
        case .ipv4Connectivity:
            .string(json: "ipv4Connectivity", { $0.ipv4Connectivity.rawValue }, write: { $0.ipv4Evidence = Connectivity(rawValue: $1)?.asEvidence })
        case .ipv6Connectivity:
            .string(json: "ipv6Connectivity", { $0.ipv6Connectivity.rawValue }, write: { $0.ipv6Evidence = Connectivity(rawValue: $1)?.asEvidence })
        case .captivePortal: .string(json: "captivePortal", { $0.captivePortal }, write: { $0.captivePortal = $1 })
        case .ipv4Interface: .string(json: "ipv4Interface", { $0.ipv4Interface }, write: { $0.ipv4Interface = $1 })
        case .ipv6Interface: .string(json: "ipv6Interface", { $0.ipv6Interface }, write: { $0.ipv6Interface = $1 })
        case .ipv4Transport: .string(json: "ipv4Transport", { $0.ipv4Transport?.rawValue ?? "" }, write: { $0.ipv4Transport = Transport(rawValue: $1) })
        case .ipv6Transport: .string(json: "ipv6Transport", { $0.ipv6Transport?.rawValue ?? "" }, write: { $0.ipv6Transport = Transport(rawValue: $1) })
        case .interfaces:
            PropertyDefinition(
                signature: "aa{sv}", jsonKey: "interfaces", read: { snapshot, _ in .dictionaries(snapshot.interfaces.map { $0.busDictionary }) },
                write: { snapshot, value in snapshot.interfaces = (value.dictionaries ?? []).compactMap(NetworkInterface.init(busDictionary:)) },
                // (Compared as entries: a host with thousands of links would build every dictionary twice.)
                differs: { $0.interfaces != $1.interfaces }
            )
        case .dns: .string(json: "dns", text: "DNS", { $0.dns.rawValue }, write: { $0.dns = DNSReadiness(rawValue: $1) ?? .unknown })
        case .nat64Prefix: .string(json: "nat64Prefix", text: "NAT64", { $0.nat64Prefix }, write: { $0.nat64Prefix = $1 })
        case .ipv4Access: .string(json: "ipv4Access", text: "IPv4 path", { $0.ipv4Access.rawValue }, write: { $0.ipv4Access = IPv4Access(rawValue: $1) ?? .none })
        case .meteredReason:
            .string(json: "meteredReason", { $0.meteredReason.rawValue }, write: { $0.meteredReason = MeteredReason(rawValue: $1) ?? .noRoute })
        case .networkID: .string(json: "networkID", text: "Network ID", { $0.networkID }, write: { $0.networkID = $1 })
        case .captivePortalSession:
            PropertyDefinition(
                signature: "a{sv}", jsonKey: "captivePortalSession", textLabel: "Session",
                read: { snapshot, _ in .dictionary(snapshot.captivePortalSession.busDictionary) },
                write: { snapshot, value in snapshot.captivePortalSession = CaptivePortalSession(busValue: value) }
            )
        }
    }
}

/// One entry of the property table: what the bus, the client and the CLI need to know of a
/// published value.
public struct PropertyDefinition {
    /// The D-Bus type signature (`s`, `b`, `u`, `t`, `as`, `a{sv}`, `aa{sv}`).
    public let signature: String
    /// The member's name in `reachabilityctl status --json` and the other `--json` records; nil
    /// for a property the records leave out (`Generation`).
    public let jsonKey: String?
    /// The label of the row `reachabilityctl status` shows for this property after its summary
    /// rows (Status, Interface, Transport, IPv4, IPv6, Metered, Online, Reason, which combine
    /// several properties and are laid out by the CLI); nil for a property without a row of its own.
    public let textLabel: String?
    /// The property's value in a snapshot; the second argument is the `Generation` to publish.
    public let read: (ReachabilitySnapshot, UInt64) -> BusValue
    /// Writes a published value back into a snapshot (the client's side); nil for a property
    /// derived from others (`Reachable`, `Connectivity`) or not in the snapshot (`Generation`).
    /// A value of another type than ``signature`` writes the type's empty value.
    public let write: ((inout ReachabilitySnapshot, BusValue) -> Void)?
    /// Whether the property's value differs between two snapshots (what `PropertiesChanged`
    /// announces); by default, whether ``read`` gives two values.
    public let differs: (ReachabilitySnapshot, ReachabilitySnapshot) -> Bool

    /// Creates an entry.
    public init(
        signature: String, jsonKey: String?, textLabel: String? = nil, read: @escaping (ReachabilitySnapshot, UInt64) -> BusValue,
        write: ((inout ReachabilitySnapshot, BusValue) -> Void)? = nil, differs: ((ReachabilitySnapshot, ReachabilitySnapshot) -> Bool)? = nil
    ) {
        self.signature = signature
        self.jsonKey = jsonKey
        self.textLabel = textLabel
        self.read = read
        self.write = write
        self.differs = differs ?? { read($0, 0) != read($1, 0) }
    }

    /// A string property (`s`); a mistyped value writes "".
    public static func string(
        json: String?, text: String? = nil, _ read: @escaping (ReachabilitySnapshot) -> String, write: ((inout ReachabilitySnapshot, String) -> Void)? = nil
    ) -> PropertyDefinition {
        PropertyDefinition(signature: "s", jsonKey: json, textLabel: text, read: { snapshot, _ in .string(read(snapshot)) }, write: write.map { write in
            { snapshot, value in write(&snapshot, value.string ?? "") }
        })
    }

    /// A boolean property (`b`); a mistyped value writes false.
    public static func boolean(
        json: String?, text: String? = nil, _ read: @escaping (ReachabilitySnapshot) -> Bool, write: ((inout ReachabilitySnapshot, Bool) -> Void)? = nil
    ) -> PropertyDefinition {
        PropertyDefinition(signature: "b", jsonKey: json, textLabel: text, read: { snapshot, _ in .boolean(read(snapshot)) }, write: write.map { write in
            { snapshot, value in write(&snapshot, value.boolean ?? false) }
        })
    }
}

extension BusValue {
    /// The value a JSON value (``json``'s) stands for: a string, a boolean, a whole number as
    /// `u` (`t` past 32 bits), an array of strings (an empty array too) as `as`, an array of
    /// objects as `aa{sv}`, an object as `a{sv}`; anything else as "".
    public init(json: JSONValue) {
        switch json {
        case .string(let string): self = .string(string)
        case .boolean(let flag): self = .boolean(flag)
        case .number(let number) where number >= 0 && number.rounded() == number && number < 0x1p64:
            self = number <= Double(UInt32.max) ? .unsigned32(UInt32(number)) : .unsignedInteger(UInt64(number))
        case .array(let elements) where elements.allSatisfy({ if case .string = $0 { true } else { false } }):
            self = .strings(elements.compactMap { if case .string(let string) = $0 { string } else { nil } })
        case .array(let elements):
            self = .dictionaries(elements.compactMap { if case .object(let members) = $0 { members.mapValues(BusValue.init(json:)) } else { nil } })
        case .object(let members): self = .dictionary(members.mapValues(BusValue.init(json:)))
        case .null, .number: self = .string("")
        }
    }

    /// The value in JSON: strings, booleans and numbers as such, arrays as arrays, dictionaries
    /// as objects.
    public var json: JSONValue {
        switch self {
        case .string(let string): .string(string)
        case .boolean(let flag): .boolean(flag)
        case .unsigned32(let number): .number(Double(number))
        case .unsignedInteger(let number): .number(Double(number))
        case .strings(let strings): .array(strings.map(JSONValue.string))
        case .dictionary(let dictionary): .object(dictionary.mapValues(\.json))
        case .dictionaries(let dictionaries): .array(dictionaries.map { .object($0.mapValues(\.json)) })
        }
    }
}

extension ReachabilitySnapshot {
    /// The value of `property` in this snapshot, as its entry in ``ReachabilityProperty/definition``
    /// reads it; `generation` supplies `Generation`.
    public func value(of property: ReachabilityProperty, generation: UInt64) -> BusValue {
        property.definition.read(self, generation)
    }

    /// The properties (other than `Generation`) whose values differ from `previous`, in
    /// declaration order.
    public func changedProperties(since previous: ReachabilitySnapshot) -> [ReachabilityProperty] {
        ReachabilityProperty.allCases.filter { property in
            property != .generation && property.definition.differs(self, previous)
        }
    }

    /// Every property with a JSON key in the table, by that key: what every `--json` record of
    /// `reachabilityctl` holds.
    public var jsonMembers: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for property in ReachabilityProperty.allCases {
            guard let key = property.definition.jsonKey else { continue }
            members[key] = value(of: property, generation: 0).json
        }
        return members
    }

    /// The snapshot a Varlink `state` (``varlinkState(generation:)``) describes: each member the
    /// property table writes back, as a client writes `GetAll`'s values; a member missing or of
    /// another type keeps the value of ``unknown`` or writes its type's empty value.
    public init(varlinkState state: [String: JSONValue]) {
        self = .unknown
        for property in ReachabilityProperty.allCases {
            let definition = property.definition
            guard let key = definition.jsonKey, let write = definition.write, let value = state[key] else { continue }
            write(&self, BusValue(json: value))
        }
    }

    /// The state Varlink's `GetState` and `Subscribe` answer: ``jsonMembers`` and `generation`.
    public func varlinkState(generation: UInt64) -> JSONValue {
        var members = jsonMembers
        members[VarlinkContract.generationKey] = value(of: .generation, generation: generation).json
        return .object(members)
    }
}
