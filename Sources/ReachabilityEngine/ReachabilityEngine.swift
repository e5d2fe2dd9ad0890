#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// How the engine reads the kernel.
public struct EngineConfiguration: Sendable {
    /// The sysfs mount point used to classify links ("/sys"; tests inject a fake tree).
    public var sysfsRoot: String
    /// The netlink receive buffer to request, in bytes.
    public var receiveBufferBytes: Int32

    /// The global IPv4 destination whose route decides IPv4 reachability. Only the kernel's
    /// route lookup is done for it; no packet is ever sent.
    public static let ipv4ProbeDestination = "8.8.8.8"
    /// The global IPv6 destination whose route decides IPv6 reachability.
    public static let ipv6ProbeDestination = "2001:4860:4860::8888"

    /// Creates a configuration; the defaults are the production values.
    public init(sysfsRoot: String = "/sys", receiveBufferBytes: Int32 = 8 * 1024 * 1024) {
        self.sysfsRoot = sysfsRoot
        self.receiveBufferBytes = receiveBufferBytes
    }
}

/// A destination that is not a literal IPv4 or IPv6 address.
public struct InvalidAddressError: Error, Sendable, CustomStringConvertible {
    /// The rejected text.
    public var address: String

    /// "'foo' is not a literal IPv4 or IPv6 address".
    public var description: String { "'\(address)' is not a literal IPv4 or IPv6 address" }
}

/// The reachability engine: rtnetlink events in, ``ReachabilitySnapshot`` changes out.
///
/// Start-up subscribes to link, address, route and rule groups, dumps links and addresses,
/// and evaluates. Each batch of events updates the link/address mirror, asks the kernel for
/// the routes to the probe destinations, applies ``ReachabilityRule`` once and reports the
/// snapshot if it changed. Confined to `queue`: call every method there; callbacks run there.
public final class ReachabilityEngine: @unchecked Sendable {
    private let queue: DispatchQueue
    private let configuration: EngineConfiguration
    private var table: LinkTable
    private var query: NetlinkQueryClient?
    private var events: NetlinkEventSource?
    private var onChange: (ReachabilitySnapshot) -> Void = { _ in }
    private var loggedParseErrors: Set<NetlinkParseError> = []

    /// The last evaluated snapshot (`.unknown` before ``start(onChange:)``).
    public private(set) var snapshot = ReachabilitySnapshot.unknown

    /// Creates an engine confined to `queue`.
    public init(queue: DispatchQueue, configuration: EngineConfiguration = EngineConfiguration()) {
        self.queue = queue
        self.configuration = configuration
        table = LinkTable(inspector: SysfsLinkInspector(root: configuration.sysfsRoot))
    }

    /// Subscribes, enumerates, evaluates and starts listening.
    ///
    /// - Parameter onChange: called on the queue with each new snapshot that differs from the last.
    /// - Returns: the first evaluation.
    public func start(onChange: @escaping (ReachabilitySnapshot) -> Void) throws(SystemError) -> ReachabilitySnapshot {
        dispatchPrecondition(condition: .onQueue(queue))
        self.onChange = onChange
        // Subscribe before dumping so that no change between the dump and the first event is lost.
        let monitor = try NetlinkSocket.open()
        do throws(SystemError) {
            let effective = try monitor.setReceiveBuffer(bytes: configuration.receiveBufferBytes)
            Log.debug("Netlink receive buffer: \(effective) bytes")
            // The kernel drops route messages that cannot change the route to the probes.
            try Self.probeRouteFilter.attach(to: monitor)
            try monitor.subscribe(to: NetlinkSocket.Group.allCases)
            query = try NetlinkQueryClient()
            try resynchronise()
        } catch {
            monitor.close()
            throw error
        }
        snapshot = evaluate()
        let source = NetlinkEventSource(socket: monitor, queue: queue) { [weak self] batch in self?.handle(batch) }
        events = source
        source.start()
        return snapshot
    }

    /// The monitor socket's filter: only routes whose prefix contains a probe destination (and
    /// every non-route message) reach the engine. See ``NetlinkSocketFilter``.
    static let probeRouteFilter = NetlinkSocketFilter.routesToProbes(
        ipv4Probe: IPAddressBytes.parse(EngineConfiguration.ipv4ProbeDestination)!.bytes,
        ipv6Probe: IPAddressBytes.parse(EngineConfiguration.ipv6ProbeDestination)!.bytes
    )

    /// Stops listening and closes the sockets.
    public func stop() {
        events?.cancel()
        events = nil
        query = nil
    }

    /// Decides reachability of one literal address with the kernel's route lookup for it.
    ///
    /// - Throws: ``InvalidAddressError`` when `text` is not a literal IPv4/IPv6 address.
    public func checkAddress(_ text: String) throws(InvalidAddressError) -> DestinationVerdict {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let (family, bytes) = IPAddressBytes.parse(text) else { throw InvalidAddressError(address: text) }
        return ReachabilityRule.evaluate(destinationFacts(bytes, family: family))
    }

    private func handle(_ batch: NetlinkBatch) {
        for error in batch.parseErrors where loggedParseErrors.insert(error).inserted {
            Log.warning("Failed to parse rtnetlink message: \(error), ignoring.")
        }
        if batch.foreignDatagrams > 0 {
            Log.debug("Ignored \(batch.foreignDatagrams) netlink datagram(s) not sent by the kernel.")
        }
        Log.debug("Read \(batch.messages.count) rtnetlink message(s), \(Self.routeMessageCount(batch)) of them route(s).")
        var relevant = false
        if batch.overflowed {
            Log.warning("Netlink receive queue overrun, resynchronising.")
            do {
                try resynchronise()
            } catch {
                Log.error("\(error); keeping the previous link state.")
            }
            relevant = true
        }
        for message in batch.messages {
            if table.apply(message.payload) {
                relevant = true
                continue
            }
            switch message.payload {
            case .newRoute, .deleteRoute, .ruleChanged: relevant = true
            default: break
            }
        }
        guard relevant else { return }
        let next = evaluate()
        guard next != snapshot else { return }
        snapshot = next
        onChange(next)
    }

    /// Replaces the mirror with fresh dumps; on failure the old mirror stays.
    private func resynchronise() throws(SystemError) {
        guard let query else { return }
        let links = try query.dump(NetlinkRequest.dumpLinks)
        let addresses = try query.dump(NetlinkRequest.dumpAddresses)
        var fresh = table
        fresh.removeAll()
        for message in links.messages + addresses.messages { fresh.apply(message.payload) }
        for error in links.parseErrors + addresses.parseErrors where loggedParseErrors.insert(error).inserted {
            Log.warning("Failed to parse rtnetlink dump message: \(error), ignoring.")
        }
        table = fresh
    }

    private func evaluate() -> ReachabilitySnapshot {
        let ipv4 = IPAddressBytes.parse(EngineConfiguration.ipv4ProbeDestination)!
        let ipv6 = IPAddressBytes.parse(EngineConfiguration.ipv6ProbeDestination)!
        return ReachabilityRule.decide(
            ipv4: destinationFacts(ipv4.bytes, family: ipv4.family),
            ipv6: destinationFacts(ipv6.bytes, family: ipv6.family)
        )
    }

    /// Asks the kernel for the route to `destination` and gathers what the rule needs.
    private func destinationFacts(_ destination: [UInt8], family: UInt8) -> DestinationFacts {
        let addressFamily = LinkTable.family(family)!
        let lookup: RouteLookup
        do {
            guard let query else { return DestinationFacts(family: addressFamily, lookup: .failed(errno: EBADF)) }
            switch try query.lookupRoute(to: destination, family: family) {
            case .error(let code):
                lookup = .failed(errno: code)
            case .route(let route):
                lookup = .route(RouteFacts(
                    type: Self.routeType(route.type),
                    outputInterfaceIndex: route.outputInterface,
                    gateway: route.gateway.map { IPAddressBytes.format($0, family: family) },
                    table: route.table,
                    isLinkDown: route.flags & RouteFlag.linkDown != 0
                ))
            }
        } catch {
            Log.warning("\(error)")
            lookup = .failed(errno: error.errno)
        }
        guard case .route(let route) = lookup, let index = route.outputInterfaceIndex else {
            return DestinationFacts(family: addressFamily, lookup: lookup)
        }
        return DestinationFacts(
            family: addressFamily,
            lookup: lookup,
            outputLink: table.links[index],
            outputLinkAddresses: table.addresses(onLink: index)
        )
    }

    private static func routeMessageCount(_ batch: NetlinkBatch) -> Int {
        batch.messages.reduce(0) { count, message in
            switch message.payload {
            case .newRoute, .deleteRoute: count + 1
            default: count
            }
        }
    }

    private static func routeType(_ number: UInt8) -> RouteType {
        switch number {
        case RouteTypeNumber.unicast: .unicast
        case RouteTypeNumber.local: .local
        case RouteTypeNumber.unreachable: .unreachable
        case RouteTypeNumber.blackhole: .blackhole
        case RouteTypeNumber.prohibit: .prohibit
        case RouteTypeNumber.throw: .throw
        default: .other(number)
        }
    }
}
