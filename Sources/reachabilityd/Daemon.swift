#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityBus
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
    private var signalSources: [DispatchSourceSignal] = []
    private var watchdog: DispatchSourceTimer?
    /// When `RoutesChanged` was last emitted, and whether one is scheduled.
    private var lastRoutesChanged = DispatchTime(uptimeNanoseconds: 0)
    private var routesChangedScheduled = false

    init(sysfsRoot: String, receiveBufferBytes: Int32) {
        engine = ReachabilityEngine(queue: queue, configuration: EngineConfiguration(sysfsRoot: sysfsRoot, receiveBufferBytes: receiveBufferBytes))
    }

    /// Starts on the queue and never returns; the process exits from a signal or a failure.
    func run() -> Never {
        queue.async { self.start() }
        dispatchMain()
    }

    private func start() {
        do throws(SystemError) {
            installSignalHandlers()
            engine.onRoutingEvents = { [weak self] in self?.routingEvents() }
            let first = try engine.start { [weak self] snapshot in self?.publish(snapshot) }
            Log.info("Initial status: \(first.status.rawValue) (\(first.reason)).")
            let connection = try BusConnection.system(queue: queue)
            self.connection = connection
            object = try ReachabilityObject(connection: connection, snapshot: first) { [engine] text in
                do throws(InvalidAddressError) {
                    let verdict = try engine.checkAddress(text)
                    return .answer(status: verdict.status, interface: verdict.link?.name ?? "")
                } catch {
                    return .invalidAddress(message: error.description)
                }
            }
            try connection.requestName(BusContract.busName)
            try connection.startProcessing { error in
                Log.error("Lost the connection to the system bus: \(error.errnoDescription). Exiting.")
                exit(EXIT_FAILURE)
            }
            watchdog = ServiceManager.startWatchdog(queue: queue)
            ServiceManager.notify("READY=1\nSTATUS=\(first.status.rawValue): \(first.reason)")
            Log.info("Serving \(BusContract.busName).")
        } catch {
            Log.error("\(error)")
            exit(EXIT_FAILURE)
        }
    }

    private func publish(_ snapshot: ReachabilitySnapshot) {
        Log.info("Status: \(snapshot.status.rawValue) (\(snapshot.reason)).")
        object?.publish(snapshot)
        ServiceManager.notify("STATUS=\(snapshot.status.rawValue): \(snapshot.reason)")
    }

    /// Announces `RoutesChanged` at once, or, within the minimum interval of the last one, once
    /// at the end of that interval: a burst of kernel events costs clients one re-check per interval.
    private func routingEvents() {
        guard object != nil, !routesChangedScheduled else { return }
        let earliest = lastRoutesChanged + .milliseconds(BusContract.routesChangedIntervalMilliseconds)
        guard DispatchTime.now() < earliest else { return emitRoutesChanged() }
        routesChangedScheduled = true
        queue.asyncAfter(deadline: earliest) { [weak self] in
            self?.routesChangedScheduled = false
            self?.emitRoutesChanged()
        }
    }

    private func emitRoutesChanged() {
        lastRoutesChanged = .now()
        object?.emitRoutesChanged()
    }

    /// SIGTERM and SIGINT: release the name so clients see the service leave, flush, exit 0.
    private func installSignalHandlers() {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in self?.shutDown(signal: number) }
            source.activate()
            signalSources.append(source)
        }
    }

    private func shutDown(signal number: Int32) {
        Log.info("Received \(number == SIGTERM ? "SIGTERM" : "SIGINT"), shutting down.")
        ServiceManager.notify("STOPPING=1")
        engine.stop()
        if let connection {
            connection.releaseName(BusContract.busName)
            connection.close()
        }
        exit(EXIT_SUCCESS)
    }
}
