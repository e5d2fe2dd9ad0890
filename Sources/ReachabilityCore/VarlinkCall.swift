/// One Varlink call as a client sends it (`{"method": "org.reachabilityd.Reachability.GetState",
/// "parameters": {…}, "more": true}`), decoded from one message without its terminating NUL.
/// Pure: the daemon's server reads the bytes, this says what they ask.
package struct VarlinkCall: Sendable, Hashable {
    /// The fully qualified method: interface, a dot, the member ("org.varlink.service.GetInfo").
    package var method: String
    /// The call's parameters; none when the call has none.
    package var parameters: [String: JSONValue]
    /// Whether the client asked for more than one reply (`"more": true`).
    package var more: Bool
    /// Whether the client wants no reply at all (`"oneway": true`).
    package var oneway: Bool
    /// Whether the client asked to take the connection over for another protocol (`"upgrade": true`).
    package var upgrade: Bool

    /// A call of `method`.
    package init(method: String, parameters: [String: JSONValue] = [:], more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The interface the method belongs to: what comes before its last dot ("" when none).
    package var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The method's name in its interface: what comes after its last dot.
    package var member: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// Decodes one message (the bytes before a NUL): UTF-8, a JSON object with a `method`
    /// string; `parameters` an object, `more`, `oneway` and `upgrade` booleans when present.
    /// Members the protocol may add later are ignored, as the specification asks.
    ///
    /// - Throws: ``VarlinkError/invalidMessage(_:)`` saying what is wrong.
    package init(decoding bytes: ArraySlice<UInt8>) throws(VarlinkError) {
        guard bytes.count <= VarlinkContract.callSizeLimit else {
            throw .invalidMessage("the call is longer than \(VarlinkContract.callSizeLimit) bytes")
        }
        // JSONValue's parser would replace a byte that is not UTF-8 instead of refusing it.
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .invalidMessage("the call is not UTF-8") }
        guard case .object(let members)? = JSONValue.parse(Array(bytes)) else { throw .invalidMessage("the call is not a JSON object") }
        guard case .string(let method)? = members["method"], !method.isEmpty else {
            throw .invalidMessage("the call names no method")
        }
        var parameters: [String: JSONValue] = [:]
        switch members["parameters"] {
        case nil, .null?: break
        case .object(let given)?: parameters = given
        default: throw .invalidMessage("the call's parameters are not an object")
        }
        func flag(_ name: String) throws(VarlinkError) -> Bool {
            switch members[name] {
            case nil, .null?: return false
            case .boolean(let value)?: return value
            default: throw .invalidMessage("the call's \(name) is not a boolean")
            }
        }
        self.init(method: method, parameters: parameters, more: try flag("more"), oneway: try flag("oneway"), upgrade: try flag("upgrade"))
    }

    /// The call as a client sends it, its terminating NUL included (members that are false or
    /// empty left out).
    package var encoded: [UInt8] {
        var members: [String: JSONValue] = ["method": .string(method)]
        if !parameters.isEmpty { members["parameters"] = .object(parameters) }
        if more { members["more"] = .boolean(true) }
        if oneway { members["oneway"] = .boolean(true) }
        if upgrade { members["upgrade"] = .boolean(true) }
        return Array(JSONValue.object(members).text.utf8) + [0]
    }
}
