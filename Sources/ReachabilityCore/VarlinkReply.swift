/// One message a Varlink service sends: a reply's parameters (with `"continues": true` when more
/// follow) or an error's name and parameters. Pure: the daemon encodes them, a client decodes them.
package struct VarlinkReply: Sendable, Hashable {
    /// The reply's or the error's parameters.
    package var parameters: [String: JSONValue]
    /// Whether more replies to the same call follow.
    package var continues: Bool
    /// The error's fully qualified name; nil for a reply.
    package var error: String?

    /// Decodes one message (the bytes before its NUL).
    ///
    /// - Throws: ``VarlinkError/invalidMessage(_:)`` when it is not UTF-8 or not a JSON object
    ///   whose members have the protocol's types.
    package init(decoding bytes: ArraySlice<UInt8>) throws(VarlinkError) {
        guard String(validating: bytes, as: UTF8.self) != nil, case .object(let members)? = JSONValue.parse(Array(bytes)) else {
            throw .invalidMessage("the reply is not a JSON object")
        }
        switch members["parameters"] {
        case nil, .null?: parameters = [:]
        case .object(let given)?: parameters = given
        default: throw .invalidMessage("the reply's parameters are not an object")
        }
        switch members["continues"] {
        case nil, .null?: continues = false
        case .boolean(let flag)?: continues = flag
        default: throw .invalidMessage("the reply's continues is not a boolean")
        }
        switch members["error"] {
        case nil, .null?: error = nil
        case .string(let name)?: error = name
        default: throw .invalidMessage("the reply's error is not a string")
        }
    }

    /// A reply carrying `parameters`, its terminating NUL included.
    package static func encoded(_ parameters: [String: JSONValue], continues: Bool = false) -> [UInt8] {
        var members: [String: JSONValue] = ["parameters": .object(parameters)]
        if continues { members["continues"] = .boolean(true) }
        return message(members)
    }

    /// `members` as one message: compact JSON and a NUL.
    static func message(_ members: [String: JSONValue]) -> [UInt8] {
        var bytes = JSONValue.object(members).utf8
        bytes.append(0)
        return bytes
    }
}
