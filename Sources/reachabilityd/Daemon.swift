#if canImport(Glibc)
import Glibc
#endif
import CProcessShims
import Dispatch
import ReachabilityBus
import ReachabilityService
import ReachabilityCore
import ReachabilityEngine
import SystemSupport

/// The running service: wires the engine's snapshots to the exported bus object, on one queue.
///
/// Start-up order (as systemd's own daemons do it): subscribe to netlink and enumerate,
/// evaluate, serve the Varlink socket, export the object and take the bus name, then `READY=1`.
/// Without a system bus yet (early boot, a container) the Varlink socket is served alone, and
/// the object exported once the bus's socket appears.
final class Daemon: @unchecked Sendable {
    private let queue = DispatchQueue(label: "org.reachabilityd.main")
    private let engine: ReachabilityEngine
    private var connection: BusConnection?
    private var object: ReachabilityObject?
    /// The Varlink socket's server, when there is a socket.
    private var varlink: VarlinkServer?
    /// The published state (what the bus object and the Varlink socket serve) and its
    /// `Generation`, one more at every published change.
    private var published = ReachabilitySnapshot.unknown
    private var generation: UInt64 = 0
    /// Follows the system bus's socket while there is no bus to connect to.
    private var busSocket: FollowedPath?
    /// What the methods answer, on the bus and on the Varlink socket alike: the engine's questions.
    private lazy var methods = ReachabilityMethods(
        checkAddress: { [engine] text, caller in
            do throws(InvalidAddressError) {
                let verdict = try engine.checkAddress(text, caller: caller)
                return .answer(status: verdict.status, interface: verdict.link?.name ?? "")
            } catch {
                return .invalidAddress(message: error.description)
            }
        },
        checkDestination: { [engine] text, caller in
            do throws(InvalidAddressError) {
                return .answer(try engine.checkDestination(text, caller: caller))
            } catch {
                return .invalidAddress(message: error.description)
            }
        },
        explain: { [engine] in engine.report().text },
        metrics: { [weak self] in self?.metricsText() ?? "" },
        checkConnectivity: { [engine] caller, connection, reply in engine.checkConnectivity(caller: caller, connection: connection, reply: reply) }
    )
    private var signalSource: DispatchSourceRead?
    private var watchdog: DispatchSourceTimer?
    private var networkd: NetworkdLinkDescriptions?
    private var networkManager: NetworkManagerDevices?
    /// networkd's DHCPv4 leases, for ANDROID_METERED.
    private let networkdLeases: NetworkdLeases
    /// Where the nameservers come from (resolv.conf, or systemd-resolved), for `DNS`.
    private let nameServerSources: NameServerSources
    /// RFC 7050's lookup through systemd-resolved's bus API, once the bus is up.
    private let resolvedLookup: ResolvedAddressLookup
    /// What the metrics count beside the published snapshot, resumed from the last run's.
    private var counters: MetricsCounters
    private lazy var metricsFile = MetricsTextfile(queue: queue) { [unowned self] in metricsText() }
    /// The version and start time the metrics report.
    private let metricsDaemon = PrometheusMetrics.Daemon(version: ReleaseVersion.current, startTimeSeconds: clockSeconds(CLOCK_REALTIME))
    /// The match on connections leaving the bus, whose watched destinations are forgotten.
    private var departures: NameOwnerWatch?
    private let configurationFiles: ConfigurationFiles
    /// `Generation` across restarts, under `$RUNTIME_DIRECTORY`.
    private let generationFile = RuntimeFile("generation", runtimeDirectory: Daemon.runtimeDirectory)
    /// The metrics' counters across restarts, beside it.
    private let countersFile = RuntimeFile("metrics-counters", runtimeDirectory: Daemon.runtimeDirectory)
    /// Whether a failure to store them was logged (once is enough).
    private var runtimeStoreFailed = false
    /// The `STATUS=` text last sent to the service manager (sent again only when it changes).
    private var managerStatus = ""
    /// Whether READY=1 was sent (``announceReady()``).
    private var announcedReady = false

    init(configurationFiles: ConfigurationFiles, sysfsRoot: String, receiveBufferBytes: Int32, resolvConfPath: String, networkdLeaseDirectory: String) {
        self.configurationFiles = configurationFiles
        counters = MetricsCounters(encoded: countersFile.load(limit: 4096) ?? "")
        let engine = ReachabilityEngine(queue: queue, configuration: EngineConfiguration(
            sysfsRoot: sysfsRoot, receiveBufferBytes: receiveBufferBytes,
            // READY=1 without waiting for a large table's route dump (docs/design.md, Interfaces).
            readsDefaultRoutesAfterStart: true, networkIDKey: MachineNetworkKey.read()
        ))
        self.engine = engine
        networkdLeases = NetworkdLeases(directory: networkdLeaseDirectory, queue: queue) { links in engine.setDHCPAndroidMetered(links: links) }
        nameServerSources = NameServerSources(resolvConfPath: resolvConfPath, queue: queue) { servers in engine.setNameServers(servers) }
        // The exchanges run in the check helper, started when a CheckURL= is configured and a
        // check starts: libcurl is never loaded here.
        let checkClient = CheckHelperClient(queue: queue)
        engine.checkClient = checkClient
        resolvedLookup = ResolvedAddressLookup(queue: queue)
        engine.nat64PrefixLookup = NetworkResolverLookup(resolved: resolvedLookup, helperClient: checkClient, nameServerSources: nameServerSources)
    }

    /// Starts on the queue and never returns; the process exits from a signal or a failure.
    func run() -> Never {
        // A fixed mmap threshold returns large buffers (a 1 MiB D-Bus message) to the kernel when
        // freed, instead of glibc raising the threshold and keeping them; two arenas are plenty
        // for a daemon whose work runs on one serial queue.
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        _ = mallopt(M_ARENA_MAX, 2)
        // Block the signals the daemon handles before any Dispatch thread exists, so every thread
        // inherits the mask and a signal that arrives early waits in the signalfd instead of
        // being lost while a Dispatch signal source is still being registered.
        let signals: Int32
        do throws(SystemError) {
            signals = try Self.openSignalDescriptor(for: [SIGTERM, SIGINT, SIGHUP])
        } catch {
            Log.error("\(error)")
            exit(EXIT_FAILURE)
        }
        queue.async { self.start(signalDescriptor: signals) }
        // Not dispatchMain(): it clears the main thread's signal mask, and the default action of
        // SIGTERM would then kill the process before the signalfd reports it. The daemon uses no
        // main queue; the main thread only waits, with the signals still blocked.
        while true { pause() }
    }

    private func start(signalDescriptor: Int32) {
        do throws(SystemError) {
            handleSignals(from: signalDescriptor)
            engine.onRoutingEvents = { [weak self] in
                self?.object?.emitRoutesChanged()
                self?.nameServerSources.linksChanged()
            }
            // Before the first evaluation, which then judges DNS too.
            nameServerSources.start()
            if let configuration = configurationFiles.load() {
                engine.apply(configuration)
                metricsFile.directory = configuration.metricsTextfileDirectory
            } else {
                Log.warning("Using the built-in defaults until the configuration is fixed (SIGHUP reloads it).")
            }
            let first = try engine.start { [weak self] snapshot in self?.publish(snapshot) }
            Log.info("Initial status: \(first.status.rawValue) (\(first.reason)).")
            published = first
            generation = (generationFile.load(limit: 32).flatMap { UInt64($0.filter { $0 != "\n" }) } ?? 0) + 1
            counters.count(first, at: Self.metricsTime())
            storeRuntimeState()
            metricsFile.write()
            startVarlink()
            let varlinkOnly = !connectToBus()
            if varlinkOnly {
                // Early boot, the initrd, a container: Varlink answers until a broker appears.
                guard varlink != nil else {
                    Log.error("No system bus and no Varlink socket: nothing to serve. Exiting.")
                    exit(EXIT_FAILURE)
                }
                try followBusSocket()
            }
            watchdog = ServiceManager.startWatchdog(queue: queue)
            managerStatus = "STATUS=\(first.status.rawValue): \(first.reason)"
            if varlinkOnly { announceReady() }
        } catch {
            Log.error("\(error)")
            exit(EXIT_FAILURE)
        }
    }

    /// Connects to the system bus and serves the object there, its state the published one.
    /// A failure once connected (the name taken by another, a match refused) ends the daemon,
    /// as it always did.
    ///
    /// - Returns: false when there is no bus to connect to (yet).
    private func connectToBus() -> Bool {
        let connection: BusConnection
        do throws(SystemError) {
            connection = try BusConnection.system(queue: queue)
        } catch {
            if busSocket == nil {
                Log.notice("\(error); serving \(VarlinkContract.interface) over Varlink until the system bus appears.")
            } else {
                Log.debug("\(error); waiting for the system bus.")
            }
            return false
        }
        busSocket?.cancel()
        busSocket = nil
        do throws(SystemError) {
            self.connection = connection
            object = try ReachabilityObject(connection: connection, snapshot: published, methods: methods, generation: generation)
            // Asked, not awaited: a broker that never answers must not stall the queue (Varlink,
            // the watchdog, the event loop); a refusal ends the daemon as it always did.
            try connection.requestName(BusContract.busName) { [weak self] refusal in
                guard let refusal else {
                    Log.info("Serving \(BusContract.busName).")
                    self?.announceReady()
                    return
                }
                Log.error("Could not take \(BusContract.busName) on the system bus: \(refusal). Exiting.")
                exit(EXIT_FAILURE)
            }
            departures = try NameOwnerWatch.departures(on: connection) { [weak self, engine] name in
                engine.forgetConnectivityCalls(of: name)
                guard let share = self?.object?.forgetCaller(name) else { return }
                engine.forgetWatches(of: share.name)
            }
            startDHCPCaptivePortalReaders(connection: connection)
            networkdLeases.start()
            nameServerSources.attach(to: connection)
            resolvedLookup.attach(to: connection)
            try connection.startProcessing { error in
                Log.error("Lost the connection to the system bus: \(error.errnoDescription). Exiting.")
                exit(EXIT_FAILURE)
            }
            return true
        } catch {
            Log.error("\(error)")
            exit(EXIT_FAILURE)
        }
    }

    /// Tells the service manager the daemon is ready, once: when its bus name is taken, or at
    /// start without a bus (Varlink answers then). A broker that never answers `RequestName`
    /// holds READY=1 back, not the queue: Varlink answers meanwhile.
    private func announceReady() {
        guard !announcedReady else { return }
        announcedReady = true
        ServiceManager.notify("READY=1\n" + managerStatus)
        // Read after READY=1, before any call made since: a large table's dump delayed the name's
        // reply, and with it READY=1 (547 ms with 1M routes).
        engine.readDeferredDefaultRoutes()
    }

    /// Follows the system bus's socket (``BusContract/systemBusSocketPath(address:)``) and
    /// connects once it appears.
    private func followBusSocket() throws(SystemError) {
        let address = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        // An address of another kind has no path to follow: the standard one is a guess as good.
        let path = BusContract.systemBusSocketPath(address: address) ?? BusContract.systemBusSocketPath(address: nil)!
        let follower = try FollowedPath(path: path, queue: queue) { [weak self] in _ = self?.connectToBus() }
        busSocket = follower
        follower.start()
    }

    /// Serves the Varlink interface on the socket systemd passed or on one in the runtime
    /// directory; without either, or when the socket cannot be made, only the bus is served.
    private func startVarlink() {
        do throws(SystemError) {
            guard let (descriptor, path) = try VarlinkListeningSocket.open() else {
                return Log.info("No $RUNTIME_DIRECTORY and no socket passed: not serving \(VarlinkContract.interface) over Varlink.")
            }
            varlink = VarlinkServer(
                listeningDescriptor: descriptor, queue: queue, methods: methods,
                state: { [weak self] in self?.varlinkState ?? .null },
                departed: { [engine] name, share in
                    engine.forgetConnectivityCalls(of: name)
                    if let share { engine.forgetWatches(of: share.name) }
                }
            )
            Log.info("Serving \(VarlinkContract.interface) over Varlink on \(path).")
        } catch {
            Log.warning("\(error); serving the bus only.")
        }
    }

    /// The published state as Varlink's `GetState` and `Subscribe` answer it.
    private var varlinkState: JSONValue {
        published.varlinkState(generation: generation)
    }

    /// Starts reading the captive-portal APIs (DHCPv4 option 114) that systemd-networkd and
    /// NetworkManager record, whichever runs, and the NAT64 prefixes networkd records from the
    /// router advertisements it handles; a reader that cannot subscribe is only warned about.
    private func startDHCPCaptivePortalReaders(connection: BusConnection) {
        let networkd = NetworkdLinkDescriptions(connection: connection, linkIndices: { [engine] in engine.linkIndices }) { [engine] record, link in
            engine.setCaptivePortalAPI(record.captivePortalAPI, link: link, from: .networkdDHCPv4)
            engine.setNetworkdNAT64Prefixes(record.nat64Prefixes, link: link)
            engine.setWiFiSSID(record.ssid, link: link)
        }
        let networkManager = NetworkManagerDevices(
            connection: connection, linkIndex: { [engine] in engine.linkIndex(named: $0) },
            recordMetered: { [engine] metered, link in engine.setNetworkManagerMetered(metered, link: link) }
        ) { [engine] uri, link in
            engine.setCaptivePortalAPI(uri, link: link, from: .networkManagerDHCPv4)
        }
        do {
            try networkd.start()
            self.networkd = networkd
            engine.onRouterAdvertisementRoutes = { [weak networkd] links in networkd?.routerAdvertisementRoutesChanged(on: links) }
            try networkManager.start()
            self.networkManager = networkManager
        } catch {
            Log.warning("\(error); captive-portal APIs from DHCPv4 (systemd-networkd, NetworkManager) will not all be known.")
        }
    }

    /// A published snapshot (the engine's publishing stage has applied `DownDelaySec=`): the
    /// bus object's properties and signals, the log and the service manager's status line.
    private func publish(_ snapshot: ReachabilitySnapshot) {
        defer { storeRuntimeState() }
        let previous = published
        let changed = !snapshot.changedProperties(since: previous).isEmpty
        if changed {
            published = snapshot
            generation += 1
        }
        // The signals first, the log line after them (docs/benchmarks.md, where the latency goes).
        // The object counts Generation by the same rule, from the same start. Varlink's
        // subscribers get the change PropertiesChanged announces, with its Generation, right
        // after StatusChanged: as soon as the bus's subscribers hear of it.
        let toVarlink = { if changed { self.varlink?.publish(self.varlinkState) } }
        if let object { object.publish(snapshot, beforeProperties: toVarlink) } else { toVarlink() }
        if let fields = JournalLog.publishedFields(snapshot, previous: previous) {
            let portal = snapshot.captivePortal.isEmpty ? "" : " \(snapshot.captivePortal)"
            Log.write(
                .info, "Status: \(snapshot.status.rawValue), connectivity \(snapshot.connectivity.rawValue)\(portal), DNS \(snapshot.dns.rawValue) (\(snapshot.reason)).",
                fields: fields
            )
        }
        counters.count(snapshot, at: Self.metricsTime())
        metricsFile.write()
        let status = "STATUS=\(snapshot.status.rawValue): \(snapshot.reason)"
        if status != managerStatus {
            managerStatus = status
            ServiceManager.notify(status)
        }
        HeapTrim.afterChange()
    }

    /// The metrics of the last published state (`Metrics()`, `reachabilityctl metrics`); nil
    /// before the first.
    private func metricsText() -> String? {
        // Generation is 0 only before the first evaluation.
        guard generation > 0 else { return nil }
        return PrometheusMetrics.render(published, generation: generation, counters: counters, daemon: metricsDaemon, at: Self.metricsTime())
    }

    /// Now, on the clocks the metrics read.
    private static func metricsTime() -> MetricsTime {
        MetricsTime(realtime: clockSeconds(CLOCK_REALTIME), monotonic: clockSeconds(CLOCK_MONOTONIC))
    }

    /// `$RUNTIME_DIRECTORY`, where systemd's `RuntimeDirectory=` puts it.
    private static var runtimeDirectory: String? { getenv("RUNTIME_DIRECTORY").map { String(cString: $0) } }

    /// Stores `Generation` and the metrics' counters for a restarted daemon to go on from.
    private func storeRuntimeState() {
        guard generation > 0 else { return }
        do throws(SystemError) {
            try generationFile.store("\(generation)\n")
            try countersFile.store(counters.encoded)
        } catch {
            if !runtimeStoreFailed { Log.warning("\(error); Generation and the metrics' counters will start again from 0 if the daemon restarts.") }
            runtimeStoreFailed = true
        }
    }

    /// SIGHUP: re-read the configuration; on any problem keep the one in force.
    private func reload() {
        ServiceManager.notify("RELOADING=1")
        if let configuration = configurationFiles.load() {
            engine.apply(configuration)
            metricsFile.directory = configuration.metricsTextfileDirectory
            metricsFile.write()
            Log.info("Reloaded the configuration.")
        } else {
            Log.warning("Keeping the previous configuration.")
        }
        ServiceManager.notify("READY=1")
    }

    /// Blocks `numbers` in the calling thread (and so in every thread created after it) and
    /// returns a signalfd that reports them. SIGPIPE is ignored: a closed peer is an errno.
    /// The corresponding C functions are `pthread_sigmask` and `signalfd`.
    private static func openSignalDescriptor(for numbers: [Int32]) throws(SystemError) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in numbers { sigaddset(&mask, number) }
        let blocked = pthread_sigmask(SIG_BLOCK, &mask, nil)
        if blocked != 0 { throw SystemError(action: "block signals", errno: blocked) }
        return try valueOrErrno("open signalfd") { signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
    }

    /// SIGTERM and SIGINT: release the name so clients see the service leave, flush, exit 0.
    /// SIGHUP: reload the configuration.
    private func handleSignals(from descriptor: Int32) {
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            var info = signalfd_siginfo()
            while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                let number = Int32(info.ssi_signo)
                if number == SIGHUP { self?.reload() } else { self?.shutDown(signal: number) }
            }
        }
        source.activate()
        signalSource = source
    }

    private func shutDown(signal number: Int32) {
        Log.info("Received \(number == SIGTERM ? "SIGTERM" : "SIGINT"), shutting down.")
        ServiceManager.notify("STOPPING=1")
        engine.stop()
        metricsFile.remove()
        if let connection {
            do throws(SystemError) {
                try connection.releaseName(BusContract.busName)
            } catch {
                Log.debug("\(error), ignoring.")
            }
            connection.close()
        }
        exit(EXIT_SUCCESS)
    }
}
