#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// The nameservers an application's lookups go to, followed live, for `DNS`.
///
/// The `nameserver` lines of resolv.conf (``ResolvConf``), followed through in-place writes,
/// replacements by rename and re-pointed symbolic links (``FollowedPath``). When they name only
/// systemd-resolved's stub (127.0.0.53, 127.0.0.54), the servers are resolved's upstream ones
/// instead, global and per link (its `DNS` property, `a(iiay)`), each per-link one marked by
/// whether resolved sends it names outside the link's own domains (the link's `DefaultRoute`,
/// ``ResolvedDefaultRoute``): resolved's properties emit no change signals, so they are read
/// again when resolved (re)starts, when the file it rewrites with its upstream servers changes
/// (`/run/systemd/resolve/resolv.conf`), and on link and address changes (``linksChanged()``).
/// When resolved stops, its stub answers nothing: there are no servers from that moment until
/// it comes back. resolved is never started by these reads. Without a bus
/// (``attach(to:)`` not called: a client's in-process engine) resolved's servers are read from
/// that file. Confined to the owner's queue; `record` runs there with every new list.
package final class NameServerSources {
    /// systemd-resolved's bus name.
    static let resolvedBusName = "org.freedesktop.resolve1"
    /// The file resolved rewrites when its upstream servers change.
    static let resolvedUpstreamFile = "/run/systemd/resolve/resolv.conf"

    private let resolvConfPath: String
    private let queue: DispatchQueue
    private let record: ([NameServer]) -> Void
    private var resolvConf: FollowedPath?
    private var connection: BusConnection?
    private var resolvedAppearance: NameOwnerWatch?
    private var resolvedFile: FollowedPath?
    /// Whether resolv.conf hands every query to resolved's stub (the host's lookups go to
    /// systemd-resolved).
    package private(set) var usesResolved = false
    /// The last list recorded.
    private var recorded: [NameServer]?
    /// The number of the latest reading of resolved's servers: the answers of an earlier one,
    /// or of one made before resolved stopped, are not recorded.
    private var resolvedReading = 0

    /// - Parameters:
    ///   - resolvConfPath: the resolver configuration applications read (`/etc/resolv.conf`).
    ///   - queue: the daemon's queue.
    ///   - record: takes each new list of servers, on the queue.
    package init(resolvConfPath: String, queue: DispatchQueue, record: @escaping ([NameServer]) -> Void) {
        self.resolvConfPath = resolvConfPath
        self.queue = queue
        self.record = record
    }

    /// Reads resolv.conf and starts following it; a follower that cannot be made is warned about
    /// (the servers read now stay in force).
    package func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        do throws(SystemError) {
            let followed = try FollowedPath(path: resolvConfPath, queue: queue) { [weak self] in self?.readResolvConf() }
            followed.start()
            resolvConf = followed
        } catch {
            Log.warning("\(error); changes of \(resolvConfPath) will not be followed.")
        }
        readResolvConf()
    }

    /// The system bus is up: systemd-resolved's servers can be asked for from now on.
    package func attach(to connection: BusConnection) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.connection = connection
        if usesResolved { followResolved() }
    }

    /// Links or addresses changed: resolved's per-link servers may have too (it signals nothing).
    package func linksChanged() {
        if usesResolved { askResolved() }
    }

    private func readResolvConf() {
        let servers = ResolvConf.servers(in: readSmallFile(resolvConfPath), path: resolvConfPath)
        let stub = ResolvConf.pointsAtResolvedStub(servers.map(\.address))
        if stub != usesResolved { Log.debug("\(resolvConfPath) \(stub ? "names systemd-resolved's stub: following its upstream servers" : "names its servers itself").") }
        usesResolved = stub
        guard stub else {
            stopFollowingResolved()
            update(servers)
            return
        }
        followResolved()
    }

    private func followResolved() {
        if resolvedFile == nil {
            do throws(SystemError) {
                let followed = try FollowedPath(path: Self.resolvedUpstreamFile, queue: queue) { [weak self] in self?.askResolved() }
                followed.start()
                resolvedFile = followed
            } catch {
                Log.warning("\(error); changes of systemd-resolved's servers may be missed.")
            }
        }
        if let connection, resolvedAppearance == nil {
            do throws(SystemError) {
                resolvedAppearance = try NameOwnerWatch.appearances(
                    of: Self.resolvedBusName, description: "systemd-resolved", on: connection,
                    appeared: { [weak self] in self?.askResolved() },
                    departed: { [weak self] in self?.resolvedStopped() }
                )
            } catch {
                Log.warning("\(error); systemd-resolved's restarts will not be noticed.")
            }
        }
        askResolved()
    }

    private func stopFollowingResolved() {
        resolvedAppearance = nil
        resolvedFile?.cancel()
        resolvedFile = nil
    }

    /// Asks resolved for its upstream servers; while it does not run, there are none (its stub
    /// answers nothing). Without a bus (a client's in-process engine), the file resolved writes
    /// them to says which, without their links.
    private func askResolved() {
        guard let connection else {
            let servers = ResolvConf.nameServers(in: readSmallFile(Self.resolvedUpstreamFile) ?? "")
            update(servers.map { NameServer(address: $0, origin: .resolvConf(Self.resolvedUpstreamFile)) })
            return
        }
        resolvedReading += 1
        let reading = resolvedReading
        ask(connection, for: "DNS") { [weak self] servers in
            guard let self, let servers else { return }
            guard servers.isEmpty else { return askDefaultRoutes(connection, of: servers, reading: reading) }
            // With no server of its own, resolved queries its fallback servers.
            ask(connection, for: "FallbackDNS") { [weak self] fallback in
                guard let self, let fallback else { return }
                recordReading(fallback.map { NameServer(address: $0.address, origin: .resolvedFallback) }, reading: reading)
            }
        }
    }

    /// resolved stopped: its stub answers nothing from now on, so there are no servers until it
    /// comes back (and the answers still out are not recorded).
    private func resolvedStopped() {
        resolvedReading += 1
        update([])
    }

    /// Records the servers of resolved's reading number `reading`, unless a later one began.
    private func recordReading(_ servers: [NameServer], reading: Int) {
        guard reading == resolvedReading else { return }
        update(servers)
    }

    /// Reads resolved's manager property `property` (`a(iiay)`); `answer` gets the servers (none
    /// while resolved does not run), or nil when resolv.conf no longer names it or the call
    /// could not be made.
    private func ask(_ connection: BusConnection, for property: String, answer: @escaping ([NameServer]?) -> Void) {
        do throws(SystemError) {
            try connection.call(
                destination: Self.resolvedBusName, path: "/org/freedesktop/resolve1", interface: BusDriver.propertiesInterface, member: "Get",
                arguments: ["org.freedesktop.resolve1.Manager", property], returning: ResolvedServers.self, timeoutMicroseconds: 5_000_000,
                startsService: false
            ) { [weak self] reply in
                guard let self, usesResolved else { return answer(nil) }
                switch reply {
                case .success(let servers):
                    answer(servers.nameServers)
                case .failure(let error):
                    Log.debug("systemd-resolved did not give its \(property): \(error)")
                    answer([])
                }
            }
        } catch {
            Log.warning("\(error); keeping systemd-resolved's servers as they were.")
            answer(nil)
        }
    }

    /// Asks resolved, for each link among `servers`, whether it is a default route (its link
    /// object's `DefaultRoute`), and records the servers once every link has answered, each
    /// marked by ``ResolvedDefaultRoute``. A link that does not answer is counted.
    private func askDefaultRoutes(_ connection: BusConnection, of servers: [NameServer], reading: Int) {
        let links = Set(servers.compactMap { server -> InterfaceIndex? in
            if case .resolvedLink(let index) = server.origin { return index }
            return nil
        })
        guard !links.isEmpty else { return recordReading(servers, reading: reading) }
        let answers = DefaultRouteAnswers()
        let recordOnceAllAnswered = { [weak self] in
            guard let self, answers.values.count == links.count else { return }
            recordReading(servers.map { server in
                var server = server
                if case .resolvedLink(let index) = server.origin {
                    server.servesAnyDomain = ResolvedDefaultRoute.servesAnyDomain(server.origin, linkIsDefaultRoute: answers.values[index] ?? nil)
                }
                return server
            }, reading: reading)
        }
        for link in links {
            do throws(SystemError) {
                try connection.call(
                    destination: Self.resolvedBusName, path: Self.resolvedLinkPath(link), interface: BusDriver.propertiesInterface, member: "Get",
                    arguments: ["org.freedesktop.resolve1.Link", "DefaultRoute"], returning: ResolvedDefaultRouteValue.self,
                    timeoutMicroseconds: 5_000_000, startsService: false
                ) { [weak self] reply in
                    guard let self, usesResolved else { return }
                    switch reply {
                    case .success(let value):
                        answers.values[link] = value.isDefaultRoute
                    case .failure(let error):
                        Log.debug("systemd-resolved did not give link \(link.rawValue)'s DefaultRoute: \(error)")
                        answers.values[link] = .some(nil)
                    }
                    recordOnceAllAnswered()
                }
            } catch {
                Log.warning("\(error); counting link \(link.rawValue)'s servers for every name.")
                answers.values[link] = .some(nil)
                recordOnceAllAnswered()
            }
        }
    }

    /// resolved's object path for link `index` (``SystemdLinkPath``).
    static func resolvedLinkPath(_ index: InterfaceIndex) -> String {
        SystemdLinkPath.path(ofLink: index, under: "/org/freedesktop/resolve1/link")
    }

    /// Stops following.
    package func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        stopFollowingResolved()
        resolvConf?.cancel()
        resolvConf = nil
        connection = nil
    }

    private func update(_ servers: [NameServer]) {
        guard servers != recorded else { return }
        recorded = servers
        Log.debug("Nameservers: \(servers.isEmpty ? "none" : servers.map { "\($0.address) (\($0.origin.description))" }.joined(separator: ", ")).")
        record(servers)
    }
}

/// systemd-resolved's `DNS` property: `(link, family, address)` per upstream server, link 0 for
/// the global ones.
struct ResolvedServers: BusReplyValue {
    /// The servers, in resolved's order.
    var nameServers: [NameServer]

    init(reading reply: BusMessage) throws(SystemError) {
        nameServers = try reply.readLinkAddresses().compactMap { entry -> NameServer? in
            let family: AddressFamily? = entry.family == AF_INET ? .ipv4 : entry.family == AF_INET6 ? .ipv6 : nil
            guard let family, let address = IPAddress(family: family, bytes: entry.address) else { return nil }
            return NameServer(address: address, origin: entry.link == 0 ? .resolvedGlobal : .resolvedLink(InterfaceIndex(entry.link)))
        }
    }
}

/// The `DefaultRoute` answers gathered for one reading of resolved's servers, per link: nil
/// while the link has not answered, `.some(nil)` when it could not say.
private final class DefaultRouteAnswers {
    var values: [InterfaceIndex: Bool?] = [:]
}

/// A systemd-resolved link's `DefaultRoute` property (`b`, in the variant of a `Get` reply).
struct ResolvedDefaultRouteValue: BusReplyValue {
    /// Whether resolved sends the link's servers names outside its routing domains.
    var isDefaultRoute: Bool

    init(reading reply: BusMessage) throws(SystemError) {
        try reply.enterVariant(holding: "b")
        isDefaultRoute = try reply.readBoolean()
    }
}
