/// The calls to the daemon one process has in flight, at most ``limit``; more wait their turn
/// here, in order. Pure: the hub sends what it is given and reports what finished.
///
/// dbus-daemon's system bus refuses a connection more than 128 pending replies
/// (`max_replies_per_connection`, `LimitsExceeded`), and the daemon more than
/// `CallAdmission.waitingCallsPerCaller` waiting calls (`Busy`).
struct CallsInFlight<Call> {
    /// The most calls in flight at once.
    static var limit: Int { 64 }

    private var inFlight = 0
    private var waiting: [Call] = []
    private var nextWaiting = 0

    /// Takes a call to send: returns it when it may go now (it counts as in flight), or keeps it
    /// waiting and returns nil.
    mutating func start(_ call: Call) -> Call? {
        guard inFlight < Self.limit else {
            waiting.append(call)
            return nil
        }
        inFlight += 1
        return call
    }

    /// A call in flight finished: frees its place and returns the next waiting call to send
    /// (it counts as in flight), if any.
    mutating func finish() -> Call? {
        inFlight -= 1
        guard nextWaiting < waiting.count else { return nil }
        let next = waiting[nextWaiting]
        nextWaiting += 1
        if nextWaiting == waiting.count {
            waiting = []
            nextWaiting = 0
        }
        inFlight += 1
        return next
    }

    /// The connection went: forgets the calls in flight and returns the waiting ones, in order,
    /// for their callers to be told.
    mutating func abandon() -> [Call] {
        let abandoned = Array(waiting[nextWaiting...])
        waiting = []
        nextWaiting = 0
        inFlight = 0
        return abandoned
    }
}
