/// A JSON value (RFC 8259), as much as the captive-portal API's answers need: the core has no
/// Foundation. Numbers are kept as `Double`.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case boolean(Bool)
    /// A number.
    case number(Double)
    /// A string, escapes decoded.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; a repeated name keeps its last value.
    case object([String: JSONValue])

    /// The deepest nesting accepted: hostile input cannot exhaust the stack.
    public static let depthLimit = 32

    /// Parses one JSON text (surrounding whitespace allowed); nil when it is not valid JSON.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = Parser(bytes: bytes)
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipWhitespace()
        return parser.position == bytes.count ? value : nil
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        mutating func skipWhitespace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func consume(_ literal: String) -> Bool {
            let expected = Array(literal.utf8)
            guard bytes[position...].starts(with: expected) else { return false }
            position += expected.count
            return true
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipWhitespace()
            guard position < bytes.count, depth < JSONValue.depthLimit else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return consume("true") ? .boolean(true) : nil
            case UInt8(ascii: "f"): return consume("false") ? .boolean(false) : nil
            case UInt8(ascii: "n"): return consume("null") ? .null : nil
            default: return number()
            }
        }

        mutating func object(depth: Int) -> JSONValue? {
            position += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if consume("}") { return .object(members) }
            while true {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let name = string() else { return nil }
                skipWhitespace()
                guard consume(":"), let member = value(depth: depth + 1) else { return nil }
                members[name] = member
                skipWhitespace()
                if consume(",") { continue }
                return consume("}") ? .object(members) : nil
            }
        }

        mutating func array(depth: Int) -> JSONValue? {
            position += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if consume("]") { return .array(elements) }
            while true {
                guard let element = value(depth: depth + 1) else { return nil }
                elements.append(element)
                skipWhitespace()
                if consume(",") { continue }
                return consume("]") ? .array(elements) : nil
            }
        }

        /// A string starting at the opening quote.
        mutating func string() -> String? {
            position += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll()
            }
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    guard position < bytes.count else { return nil }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(Unicode.Scalar(escape))
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        guard let unit = hexUnit() else { return nil }
                        if (0xD800..<0xDC00).contains(unit) {
                            // A surrogate pair: the low half must follow as another \u escape.
                            guard consume("\\u"), let low = hexUnit(), (0xDC00..<0xE000).contains(low),
                                  let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                            else { return nil }
                            scalars.append(scalar)
                        } else {
                            guard let scalar = Unicode.Scalar(unit) else { return nil }
                            scalars.append(scalar)
                        }
                    default: return nil
                    }
                default:
                    guard byte >= 0x20 else { return nil }
                    run.append(byte)
                }
            }
            return nil
        }

        mutating func hexUnit() -> UInt32? {
            guard position + 4 <= bytes.count, let unit = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else { return nil }
            position += 4
            return unit
        }

        mutating func number() -> JSONValue? {
            let start = position
            let allowed = Set("+-0123456789.eE".utf8)
            while position < bytes.count, allowed.contains(bytes[position]) { position += 1 }
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            guard let first = text.first, first == "-" || first.isNumber, let number = Double(text), number.isFinite else { return nil }
            return .number(number)
        }
    }
}

extension JSONValue {
    /// The value as compact JSON text: object members sorted by name, `/` not escaped, control
    /// characters as `\u00XX`; whole numbers without a fraction ("3", not "3.0").
    public var text: String {
        String(decoding: utf8, as: UTF8.self)
    }

    /// ``text``'s UTF-8 bytes, written into one buffer (what a socket is sent; no string is
    /// built on the way).
    package var utf8: [UInt8] {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return bytes
    }

    /// Appends ``text``'s UTF-8 bytes to `bytes`.
    private func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes += "null".utf8
        case .boolean(let flag): bytes += (flag ? "true" : "false").utf8
        case .number(let number): bytes += (number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)).utf8
        case .string(let string): Self.writeQuoted(string, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeQuoted(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// `string` quoted: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or
    /// `\u00XX`, every other byte as it is (a multi-byte character's bytes are all ≥ 0x80).
    private static func writeQuoted(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += #"\""#.utf8
            case UInt8(ascii: "\\"): bytes += #"\\"#.utf8
            case UInt8(ascii: "\n"): bytes += #"\n"#.utf8
            case UInt8(ascii: "\r"): bytes += #"\r"#.utf8
            case UInt8(ascii: "\t"): bytes += #"\t"#.utf8
            case 0..<0x20: bytes += #"\u00"#.utf8 + [hexDigit(byte >> 4), hexDigit(byte & 0xf)]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
