/// A network interface's index in this namespace (`ifindex`, as `ip link` prints it), the key
/// links are known by above the netlink layer.
public struct InterfaceIndex: Sendable, Hashable, Comparable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The kernel's number.
    public let rawValue: Int32

    /// The index the kernel numbers `rawValue`.
    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// An index written as a number (tests, fixtures).
    public init(integerLiteral value: Int32) {
        rawValue = value
    }

    /// The number, as `ip link` shows it.
    public var description: String { String(rawValue) }

    /// Orders by number.
    public static func < (left: InterfaceIndex, right: InterfaceIndex) -> Bool {
        left.rawValue < right.rawValue
    }
}
