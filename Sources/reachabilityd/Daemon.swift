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
/// evaluate, export the object, take the bus name, then `READY=1`.
final class Daemon: @unchecked Sendable {
    private let queue = DispatchQueue(label: "org.reachabilityd.main")
    private let engine: ReachabilityEngine
    private var connection: BusConnection?
    private var object: ReachabilityObject?
    private var signalSource: DispatchSourceRead?
    private var watchdog: DispatchSourceTimer?
    private var networkd: NetworkdLinkDescriptions?
    private var networkManager: NetworkManagerCaptivePortals?
    /// Where the nameservers come from (resolv.conf, or systemd-resolved), for `DNS`.
    private let nameServerSources: NameServerSources
    /// RFC 7050's lookup through systemd-resolved's bus API, once the bus is up.
    private let resolvedLookup: ResolvedAddressLookup
    /// What the metrics count beside the published snapshot, resumed from the last run's.
    private var counters: MetricsCounters
    private lazy var metricsFile = MetricsTextfile(queue: queue) { [unowned self] in metricsText() }
    /// The version and start time the metrics report.
    private let metricsDaemon = PrometheusMetrics.Daemon(version: DaemonOptions.version, startTimeSeconds: clockSeconds(CLOCK_REALTIME))
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

    init(configurationFiles: ConfigurationFiles, sysfsRoot: String, receiveBufferBytes: Int32, resolvConfPath: String) {
        self.configurationFiles = configurationFiles
        counters = MetricsCounters(encoded: countersFile.load(limit: 4096) ?? "")
        let engine = ReachabilityEngine(queue: queue, configuration: EngineConfiguration(
            sysfsRoot: sysfsRoot, receiveBufferBytes: receiveBufferBytes,
            // READY=1 without waiting for a large table's route dump (docs/design.md, Interfaces).
            readsDefaultRoutesAfterStart: true
        ))
        self.engine = engine
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
            let connection = try BusConnection.system(queue: queue)
            self.connection = connection
            object = try ReachabilityObject(connection: connection, snapshot: first, methods: ReachabilityMethods(
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
            ), generation: (generationFile.load(limit: 32).flatMap { UInt64($0.filter { $0 != "\n" }) } ?? 0) + 1)
            counters.count(first, at: Self.metricsTime())
            storeRuntimeState()
            metricsFile.write()
            try connection.requestName(BusContract.busName)
            departures = try NameOwnerWatch.departures(on: connection) { [weak self, engine] name in
                engine.forgetConnectivityCalls(of: name)
                guard let share = self?.object?.forgetCaller(name) else { return }
                engine.forgetWatches(of: share.name)
            }
            startDHCPCaptivePortalReaders(connection: connection)
            nameServerSources.attach(to: connection)
            resolvedLookup.attach(to: connection)
            try connection.startProcessing { error in
                Log.error("Lost the connection to the system bus: \(error.errnoDescription). Exiting.")
                exit(EXIT_FAILURE)
            }
            watchdog = ServiceManager.startWatchdog(queue: queue)
            managerStatus = "STATUS=\(first.status.rawValue): \(first.reason)"
            ServiceManager.notify("READY=1\n" + managerStatus)
            Log.info("Serving \(BusContract.busName).")
        } catch {
            Log.error("\(error)")
            exit(EXIT_FAILURE)
        }
    }

    /// Starts reading the captive-portal APIs (DHCPv4 option 114) that systemd-networkd and
    /// NetworkManager record, whichever runs, and the NAT64 prefixes networkd records from the
    /// router advertisements it handles; a reader that cannot subscribe is only warned about.
    private func startDHCPCaptivePortalReaders(connection: BusConnection) {
        let networkd = NetworkdLinkDescriptions(connection: connection, linkIndices: { [engine] in engine.linkIndices }) { [engine] record, link in
            engine.setCaptivePortalAPI(record.captivePortalAPI, link: link, from: .networkdDHCPv4)
            engine.setNetworkdNAT64Prefixes(record.nat64Prefixes, link: link)
        }
        let networkManager = NetworkManagerCaptivePortals(connection: connection, linkIndex: { [engine] in engine.linkIndex(named: $0) }) {
            [engine] uri, link in
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
        guard let object else { return }
        let previous = object.snapshot
        // The signals first, the log line after them (docs/benchmarks.md, where the latency goes).
        object.publish(snapshot)
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
        guard let object else { return nil }
        return PrometheusMetrics.render(object.snapshot, generation: object.generation, counters: counters, daemon: metricsDaemon, at: Self.metricsTime())
    }

    /// Now, on the clocks the metrics read.
    private static func metricsTime() -> MetricsTime {
        MetricsTime(realtime: clockSeconds(CLOCK_REALTIME), monotonic: clockSeconds(CLOCK_MONOTONIC))
    }

    /// `$RUNTIME_DIRECTORY`, where systemd's `RuntimeDirectory=` puts it.
    private static var runtimeDirectory: String? { getenv("RUNTIME_DIRECTORY").map { String(cString: $0) } }

    /// Stores the object's `Generation` and the metrics' counters for a restarted daemon to go
    /// on from.
    private func storeRuntimeState() {
        guard let object else { return }
        do throws(SystemError) {
            try generationFile.store("\(object.generation)\n")
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
