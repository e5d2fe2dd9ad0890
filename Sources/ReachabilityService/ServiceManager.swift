import CSystemd
import Dispatch
import SystemSupport

/// The service manager's notification protocol (`sd_notify`): readiness, status text, watchdog.
/// Every call is a no-op when the daemon was not started by systemd (`$NOTIFY_SOCKET` unset).
public enum ServiceManager {
    /// `sd_notify` blocks while the manager's socket queue is full; sending from a queue of its
    /// own keeps the daemon's event loop and bus answering meanwhile. Order is kept.
    private static let notifications = DispatchQueue(label: "org.reachabilityd.notify")

    /// Sends `state` (e.g. "READY=1\nSTATUS=reachable-via-ethernet") to the service manager,
    /// without waiting for it.
    /// The corresponding C function is `sd_notify`.
    public static func notify(_ state: String) {
        notifications.async { send(state) }
    }

    private static func send(_ state: String) {
        let result = sd_notify(0, state)
        if result < 0 {
            Log.warning("\(SystemError(action: "notify the service manager", errno: -result)), ignoring.")
        }
    }

    /// Starts sending `WATCHDOG=1` at half the interval systemd asked for (`$WATCHDOG_USEC`).
    ///
    /// - Returns: the timer (keep it alive), or nil when no watchdog is configured.
    /// The corresponding C function is `sd_watchdog_enabled`.
    public static func startWatchdog(queue: DispatchQueue) -> DispatchSourceTimer? {
        var interval: UInt64 = 0
        guard sd_watchdog_enabled(0, &interval) > 0, interval > 0 else { return nil }
        let period = DispatchTimeInterval.microseconds(Int(interval / 2))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + period, repeating: period)
        timer.setEventHandler { notify("WATCHDOG=1") }
        timer.activate()
        Log.debug("Watchdog enabled: pinging every \(interval / 2) µs.")
        return timer
    }
}
