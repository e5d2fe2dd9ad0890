#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import Dispatch
import SystemSupport

/// An sd-bus connection driven by Dispatch on one serial queue.
///
/// sd-bus is single-threaded per connection: every method must be called on `queue`, and all
/// callbacks run there. The queue reads the bus fd with a read source, writes only while
/// `sd_bus_get_events` asks for `POLLOUT`, and wakes for sd-bus timeouts with a timer.
public final class BusConnection: @unchecked Sendable {
    /// The underlying `sd_bus *`.
    package let bus: OpaquePointer
    /// The serial queue that owns the connection.
    package let queue: DispatchQueue
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var writeSourceRunning = false
    private var timer: DispatchSourceTimer?
    /// The sd-bus deadline (µs, `CLOCK_MONOTONIC`) the timer is set for; `UInt64.max` for none.
    private var timerDeadline: UInt64?
    private var onDisconnect: (SystemError) -> Void = { _ in }
    /// Whether a turn of `process()` is queued to go on where the last one stopped.
    private var continuationQueued = false

    /// The most `sd_bus_process` steps (about one message each) one turn of the queue takes.
    /// The rest waits behind whatever the queue has meanwhile (netlink events, the watchdog's
    /// timer): a flood of calls delays them by one turn at most, not by the flood.
    public static let stepsPerTurn = 32

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS` when set).
    /// The corresponding C function is `sd_bus_open_system`.
    public static func system(queue: DispatchQueue) throws(SystemError) -> BusConnection {
        var bus: OpaquePointer?
        try sdCall("connect to the system bus") { sd_bus_open_system(&bus) }
        return BusConnection(adopting: bus!, queue: queue)
    }

    /// Wraps a new `sd_bus *`, taking over its reference.
    init(adopting bus: OpaquePointer, queue: DispatchQueue) {
        self.bus = bus
        self.queue = queue
    }

    deinit {
        sd_bus_flush_close_unref(bus)
    }

    /// Starts processing bus traffic on the queue.
    ///
    /// - Parameter onDisconnect: called once, on the queue, if the connection drops.
    public func startProcessing(onDisconnect: @escaping (SystemError) -> Void) throws(SystemError) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.onDisconnect = onDisconnect
        let descriptor = try sdCall("get the bus file descriptor") { sd_bus_get_fd(bus) }
        let read = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        read.setEventHandler { [weak self] in self?.process() }
        let write = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
        write.setEventHandler { [weak self] in self?.process() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            // Fired (it is one-shot): the next rearm() sets it again, whatever the deadline.
            self?.timerDeadline = nil
            self?.process()
        }
        readSource = read
        writeSource = write
        self.timer = timer
        read.activate()
        timer.activate()
        process()
    }

    /// Takes the well-known `name`, failing if another connection has it or policy denies it.
    /// The corresponding C function is `sd_bus_request_name`.
    public func requestName(_ name: String) throws(SystemError) {
        try sdCall("acquire bus name \(name)") { sd_bus_request_name(bus, name, 0) }
        rearm()
    }

    /// Gives `name` up, so clients see the service go away at once. Waits for the bus's answer;
    /// what arrives meanwhile is processed in turn, as after any call.
    /// The corresponding C function is `sd_bus_release_name`.
    public func releaseName(_ name: String) throws(SystemError) {
        defer { rearm() }
        try sdCall("release bus name \(name)") { sd_bus_release_name(bus, name) }
    }

    /// Stops the Dispatch sources and flushes what is queued for sending. Call it (on the queue)
    /// before releasing a connection that processed traffic, also after a disconnection.
    public func close() {
        // The bus fd must stay open until the sources' cancellation has been processed: their
        // cancel handlers keep the connection (which closes the fd in deinit) alive until then.
        if let readSource {
            readSource.setCancelHandler { withExtendedLifetime(self) {} }
            readSource.cancel()
        }
        timer?.cancel()
        if let writeSource {
            writeSource.setCancelHandler { withExtendedLifetime(self) {} }
            if !writeSourceRunning { writeSource.resume() }
            writeSource.cancel()
        }
        readSource = nil
        writeSource = nil
        timer = nil
        _ = sd_bus_flush(bus)
    }

    /// Runs `sd_bus_process` until it has nothing more to do or ``stepsPerTurn`` steps are
    /// done, then re-arms the sources; in the second case another turn is queued behind what
    /// waits on the queue (sd-bus may hold read messages that no fd readiness would announce).
    func process() {
        dispatchPrecondition(condition: .onQueue(queue))
        for step in 1...Self.stepsPerTurn {
            let result = sd_bus_process(bus, nil)
            if result < 0 {
                disconnected(SystemError(action: "process bus messages", errno: -result))
                return
            }
            if result == 0 { break }
            if step == Self.stepsPerTurn, !continuationQueued {
                continuationQueued = true
                queue.async { [weak self] in
                    // (Not after close() or a disconnection: their sources are gone.)
                    guard let self, readSource != nil else { return }
                    continuationQueued = false
                    process()
                }
            }
        }
        guard sd_bus_is_open(bus) > 0 else {
            disconnected(SystemError(action: "stay connected to the bus", errno: ECONNRESET))
            return
        }
        rearm()
    }

    /// Matches the sources to what sd-bus waits for: `POLLOUT` and its next timeout. Call after
    /// every send.
    package func rearm() {
        guard let writeSource, let timer else { return }
        let events = sd_bus_get_events(bus)
        let wantsWrite = events > 0 && Int16(events) & Int16(POLLOUT) != 0
        if wantsWrite != writeSourceRunning {
            wantsWrite ? writeSource.resume() : writeSource.suspend()
            writeSourceRunning = wantsWrite
        }
        var deadline = UInt64.max
        if sd_bus_get_timeout(bus, &deadline) < 0 { deadline = UInt64.max }
        // Re-setting a Dispatch timer wakes libdispatch's manager thread; after a signal that
        // competes with the bus daemon and the subscribers for the CPU. Set it only on a change.
        guard deadline != timerDeadline else { return }
        timerDeadline = deadline
        if deadline != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
            let delay = deadline > nowMicroseconds ? Int(deadline - nowMicroseconds) : 0
            timer.schedule(deadline: .now() + .microseconds(delay))
        } else {
            timer.schedule(deadline: .distantFuture)
        }
    }

    private func disconnected(_ error: SystemError) {
        if let readSource {
            readSource.setCancelHandler { withExtendedLifetime(self) {} }
            readSource.cancel()
        }
        readSource = nil
        let handler = onDisconnect
        onDisconnect = { _ in }
        handler(error)
    }
}
