/// What a Varlink call asks of the daemon, once its method and parameters are checked against
/// the interfaces the socket serves: the one table from method names to requests. Pure.
package enum VarlinkRequest: Sendable, Hashable {
    /// `org.varlink.service.GetInfo`.
    case getInfo
    /// `org.varlink.service.GetInterfaceDescription`: the interface asked for (one the socket serves).
    case getInterfaceDescription(interface: String)
    /// `GetState`.
    case getState
    /// `Subscribe`, called with `more`.
    case subscribe
    /// `CheckAddress`: the address given.
    case checkAddress(String)
    /// `CheckDestination`: the address given.
    case checkDestination(String)
    /// `CheckConnectivity`.
    case checkConnectivity
    /// `Explain`.
    case explain
    /// `Metrics`.
    case metrics

    /// The methods of `org.reachabilityd.Reachability`, in the IDL's order (a unit test compares).
    package static let interfaceMethods = ["GetState", "Subscribe", "CheckAddress", "CheckDestination", "CheckConnectivity", "Explain", "Metrics"]

    /// The interfaces the socket serves and their descriptions.
    package static let descriptions = [
        VarlinkContract.serviceInterface: VarlinkContract.serviceDescription,
        VarlinkContract.interface: VarlinkContract.interfaceDescription,
    ]

    /// What `call` asks for.
    ///
    /// - Throws: the `org.varlink.service` error the call gets: an interface or method the
    ///   socket does not serve, a parameter missing or not a string, `Subscribe` without `more`,
    ///   or `upgrade`, which no method of these interfaces offers.
    package init(_ call: VarlinkCall) throws(VarlinkError) {
        guard Self.descriptions[call.interface] != nil else { throw .interfaceNotFound(call.interface) }
        func string(_ name: String) throws(VarlinkError) -> String {
            guard case .string(let value)? = call.parameters[name] else { throw .invalidParameter(name) }
            return value
        }
        switch (call.interface, call.member) {
        case (VarlinkContract.serviceInterface, "GetInfo"): self = .getInfo
        case (VarlinkContract.serviceInterface, "GetInterfaceDescription"):
            let interface = try string("interface")
            guard Self.descriptions[interface] != nil else { throw .interfaceNotFound(interface) }
            self = .getInterfaceDescription(interface: interface)
        case (VarlinkContract.interface, "GetState"): self = .getState
        case (VarlinkContract.interface, "Subscribe"):
            guard call.more else { throw .expectedMore }
            self = .subscribe
        case (VarlinkContract.interface, "CheckAddress"): self = .checkAddress(try string("address"))
        case (VarlinkContract.interface, "CheckDestination"): self = .checkDestination(try string("address"))
        case (VarlinkContract.interface, "CheckConnectivity"): self = .checkConnectivity
        case (VarlinkContract.interface, "Explain"): self = .explain
        case (VarlinkContract.interface, "Metrics"): self = .metrics
        default: throw .methodNotFound(call.method)
        }
        guard !call.upgrade else { throw .invalidParameter("upgrade") }
    }

    /// Whether the request answers more than once: its replies continue while the connection lasts.
    package var streams: Bool { self == .subscribe }
}
