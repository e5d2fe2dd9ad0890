/// A Varlink error the daemon answers with: one of its interface's
/// (`org.reachabilityd.Reachability.InvalidAddress`, …) or one of `org.varlink.service`'s.
package enum VarlinkError: Error, Sendable, Hashable {
    /// `org.reachabilityd.Reachability.InvalidAddress`: not a literal address; why.
    case invalidAddress(address: String, message: String)
    /// `org.reachabilityd.Reachability.Busy`: the caller used its share; what it used.
    case busy(String)
    /// `org.reachabilityd.Reachability.InvalidMessage`: the bytes are no call (the connection
    /// closes after it); what is wrong.
    case invalidMessage(String)
    /// `org.varlink.service.InterfaceNotFound`: the interface asked for.
    case interfaceNotFound(String)
    /// `org.varlink.service.MethodNotFound`: the method asked for.
    case methodNotFound(String)
    /// `org.varlink.service.MethodNotImplemented`: the method asked for.
    case methodNotImplemented(String)
    /// `org.varlink.service.InvalidParameter`: the parameter missing or of the wrong type.
    case invalidParameter(String)
    /// `org.varlink.service.ExpectedMore`: a streaming method called without `more`.
    case expectedMore

    /// The fully qualified name of ``invalidAddress(address:message:)``, which a client tells apart.
    package static let invalidAddressName = VarlinkContract.interface + ".InvalidAddress"

    /// The error's fully qualified name.
    package var name: String {
        switch self {
        case .invalidAddress: Self.invalidAddressName
        case .busy: VarlinkContract.interface + ".Busy"
        case .invalidMessage: VarlinkContract.interface + ".InvalidMessage"
        case .interfaceNotFound: VarlinkContract.serviceInterface + ".InterfaceNotFound"
        case .methodNotFound: VarlinkContract.serviceInterface + ".MethodNotFound"
        case .methodNotImplemented: VarlinkContract.serviceInterface + ".MethodNotImplemented"
        case .invalidParameter: VarlinkContract.serviceInterface + ".InvalidParameter"
        case .expectedMore: VarlinkContract.serviceInterface + ".ExpectedMore"
        }
    }

    /// The error's parameters, as its IDL declares them.
    package var parameters: [String: JSONValue] {
        switch self {
        case .invalidAddress(let address, let message): ["address": .string(address), "message": .string(message)]
        case .busy(let message), .invalidMessage(let message): ["message": .string(message)]
        case .interfaceNotFound(let interface): ["interface": .string(interface)]
        case .methodNotFound(let method), .methodNotImplemented(let method): ["method": .string(method)]
        case .invalidParameter(let parameter): ["parameter": .string(parameter)]
        case .expectedMore: [:]
        }
    }

    /// The error as a message, its terminating NUL included.
    package var encoded: [UInt8] {
        VarlinkReply.message(["error": .string(name), "parameters": .object(parameters)])
    }
}
