/// The kind of a route (`rtm_type`, `RTN_*` of <linux/rtnetlink.h>): what the kernel does with
/// a packet the route matches. CNetlinkShims' `_Static_assert`s check the named values against
/// the kernel's headers.
public struct RouteType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The kernel's number.
    public let rawValue: UInt8

    /// The route type the kernel numbers `rawValue`.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// `RTN_UNICAST`: a real gateway or directly connected route.
    public static let unicast = RouteType(rawValue: 1)
    /// `RTN_LOCAL`: the destination is this host.
    public static let local = RouteType(rawValue: 2)
    /// `RTN_BLACKHOLE`.
    public static let blackhole = RouteType(rawValue: 6)
    /// `RTN_UNREACHABLE`.
    public static let unreachable = RouteType(rawValue: 7)
    /// `RTN_PROHIBIT`.
    public static let prohibit = RouteType(rawValue: 8)
    /// `RTN_THROW`.
    public static let `throw` = RouteType(rawValue: 9)

    /// A short name for sentences: "unreachable", "blackhole", ..., "type 3" for a type without one.
    public var name: String {
        switch self {
        case .unicast: "unicast"
        case .local: "local"
        case .unreachable: "unreachable"
        case .blackhole: "blackhole"
        case .prohibit: "prohibit"
        case .throw: "throw"
        default: "type \(rawValue)"
        }
    }

    /// The ``name``.
    public var description: String { name }
}

/// A routing table (`rtm_table`, or `RTA_TABLE` for a number past 255), as policy routing numbers
/// it; the named ones are checked against the kernel's headers like ``RouteType``'s.
public struct RouteTable: RawRepresentable, Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The kernel's number.
    public let rawValue: UInt32

    /// The table the kernel numbers `rawValue`.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// A table written as a number (`table 100`, as `ip route` takes it).
    public init(integerLiteral value: UInt32) {
        rawValue = value
    }

    /// `RT_TABLE_DEFAULT`.
    public static let `default` = RouteTable(rawValue: 253)
    /// `RT_TABLE_MAIN`: where routes go without a `table`.
    public static let main = RouteTable(rawValue: 254)
    /// `RT_TABLE_LOCAL`: the host's own and broadcast addresses.
    public static let local = RouteTable(rawValue: 255)

    /// The name as `ip route` prints it: main, default, local, or the number.
    public var description: String {
        switch self {
        case .main: "main"
        case .default: "default"
        case .local: "local"
        default: String(rawValue)
        }
    }
}
