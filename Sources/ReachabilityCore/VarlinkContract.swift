/// The names of the Varlink API (the source of truth is
/// `dbus/org.reachabilityd.Reachability.varlink`, which ``interfaceDescription`` holds word for
/// word: a unit test compares), and the standard `org.varlink.service` the socket serves beside it.
public enum VarlinkContract {
    /// The interface name.
    public static let interface = "org.reachabilityd.Reachability"
    /// The standard interface every Varlink service serves (`GetInfo`, `GetInterfaceDescription`).
    public static let serviceInterface = "org.varlink.service"
    /// The socket's name in the daemon's runtime directory (`$RUNTIME_DIRECTORY`, or the
    /// directory of the socket unit's `ListenStream=`): named after the interface, as systemd names
    /// its own (`/run/systemd/resolve/io.systemd.Resolve`).
    public static let socketName = "org.reachabilityd.Reachability"
    /// Where the installed daemon's socket is: `reachabilityd.socket`'s `ListenStream=`.
    public static let socketPath = "/run/reachabilityd/org.reachabilityd.Reachability"
    /// The key of `Generation` in the state `GetState` and `Subscribe` answer (the property
    /// table gives the others).
    public static let generationKey = "generation"
    /// The most bytes a call may have (its terminating NUL left out): a call of this interface
    /// is a few hundred; more is refused as ``VarlinkError/invalidMessage(_:)`` and the
    /// connection closed, so that no peer makes the daemon hold more than this per connection.
    public static let callSizeLimit = 16 * 1024

    /// The interface description that `GetInterfaceDescription` returns: the IDL file's text.
    public static let interfaceDescription = """
        # The Varlink API of reachabilityd: what the D-Bus interface org.reachabilityd.Reachability1
        # publishes (dbus/org.reachabilityd.Reachability1.xml says what each value means), for clients
        # without a system bus: containers with /run/reachabilityd bind-mounted, early boot, scripts.
        # Served on the socket /run/reachabilityd/org.reachabilityd.Reachability (mode 0666), with
        # org.varlink.service. Callers are told apart by the socket's credentials (SO_PEERCRED): a
        # peer in a user namespace that does not map its uid into the daemon's is seen, and answered,
        # as the overflow uid (65534, "nobody"), one share for all such peers.
        interface org.reachabilityd.Reachability

        # Every published value, keyed as `reachabilityctl status --json` keys them: status,
        # reachable, ipv4Reachable, ipv6Reachable, interface, transport, metered, reason,
        # connectivity, ipv4Connectivity, ipv6Connectivity, captivePortal, ipv4Interface,
        # ipv6Interface, ipv4Transport, ipv6Transport, interfaces, dns, nat64Prefix, ipv4Access,
        # meteredReason, networkID, captivePortalSession (the D-Bus properties of the same names), and
        # generation (the D-Bus property Generation). More keys may come; clients ignore keys they do
        # not know.
        method GetState() -> (state: object)

        # Called with more: the current state at once (as GetState), then one reply per published
        # change, the changes the D-Bus PropertiesChanged signal announces, in the same order and with
        # the same generation; the reply never ends while the daemon runs. A reader that does not keep
        # up (its socket full) is sent only the latest state once it reads again: generation then
        # jumps, and no state in between is queued for it. Without more:
        # org.varlink.service.ExpectedMore.
        method Subscribe() -> (state: object)

        # Reachability of one literal IPv4 or IPv6 address, as the D-Bus method CheckAddress answers
        # it, with the lookups carrying the caller's uid; the address joins the caller's watch set
        # while its connection lasts. Malformed input: InvalidAddress.
        method CheckAddress(address: string) -> (status: string, interface: string)

        # What CheckAddress answers, with how an application gets there, as the D-Bus method
        # CheckDestination answers it: status, interface, transport, source, gateway, via, address,
        # reason ("" when none). More keys may come. Malformed input: InvalidAddress.
        method CheckDestination(address: string) -> (destination: [string]string)

        # With [Connectivity] CheckURL=: runs the check now and replies once it has finished, with
        # connectivity as it then is; as the D-Bus method CheckConnectivity (one check per caller per
        # 10 s, a call while one runs shares it). Without a check, the current connectivity at once.
        method CheckConnectivity() -> (connectivity: string)

        # A multi-line report for admins: the route the kernel picked per family, every link and the
        # configuration, as the D-Bus method Explain.
        method Explain() -> (report: string)

        # The daemon's state in Prometheus' text exposition format, the text it keeps for
        # node_exporter's textfile collector when configured, as the D-Bus method Metrics.
        method Metrics() -> (metrics: string)

        # The address given is not a literal IPv4 or IPv6 address; message says why.
        error InvalidAddress (address: string, message: string)

        # The caller (all the connections of one unprivileged uid, or one of root's) used its share of
        # the daemon's time, or has too many calls or connections open; try again shortly.
        error Busy (message: string)

        # What was sent is not a Varlink call: not UTF-8, not a JSON object naming a method, larger than
        # 16 KiB, or cut off by the end of the connection. The daemon closes the connection after it.
        error InvalidMessage (message: string)
        """

    /// `org.varlink.service`'s own description, as the Varlink specification gives it (with the
    /// later `ExpectedMore`).
    public static let serviceDescription = """
        # The Varlink service interface, provided by every Varlink service: what it is and
        # the interfaces it implements.
        interface org.varlink.service

        # The service's vendor, product, version and URL, and the interfaces it implements.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # The description of an interface the service implements.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found.
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # The client is denied access.
        error PermissionDenied ()

        # The method is expected to be called with more set to true, but was not.
        error ExpectedMore ()
        """
}
