/// A D-Bus value of the types the bus core reads and writes (properties, method arguments and
/// replies, signal arguments): four basic ones and three containers.
public indirect enum BusValue: Sendable, Hashable {
    /// Signature `s`.
    case string(String)
    /// Signature `b`.
    case boolean(Bool)
    /// Signature `u`.
    case unsigned32(UInt32)
    /// Signature `t`.
    case unsignedInteger(UInt64)
    /// Signature `as`.
    case strings([String])
    /// Signature `a{sv}`: each value in a variant of its own type.
    case dictionary([String: BusValue])
    /// Signature `aa{sv}`.
    case dictionaries([[String: BusValue]])

    /// The value's D-Bus type signature.
    public var signature: String { staticSignature.description }

    /// The value's D-Bus type signature as a static (C) string: what sd-bus is given per value
    /// without converting a Swift string.
    public var staticSignature: StaticString {
        switch self {
        case .string: "s"
        case .boolean: "b"
        case .unsigned32: "u"
        case .unsignedInteger: "t"
        case .strings: "as"
        case .dictionary: "a{sv}"
        case .dictionaries: "aa{sv}"
        }
    }

    /// The string of an `s` value, else nil.
    public var string: String? {
        if case .string(let string) = self { string } else { nil }
    }

    /// The flag of a `b` value, else nil.
    public var boolean: Bool? {
        if case .boolean(let flag) = self { flag } else { nil }
    }

    /// The strings of an `as` value, else nil.
    public var strings: [String]? {
        if case .strings(let strings) = self { strings } else { nil }
    }

    /// The dictionaries of an `aa{sv}` value, else nil.
    public var dictionaries: [[String: BusValue]]? {
        if case .dictionaries(let dictionaries) = self { dictionaries } else { nil }
    }
}
