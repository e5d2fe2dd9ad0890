import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// Admits the exported object's method calls by fair shares and serves them in turn
/// (``BusMethodCall/serve()`` runs the method's handler).
///
/// A caller's first calls wait until the bus says which user it runs as
/// (`GetConnectionUnixUser`): all connections of one unprivileged user draw on one
/// ``CallerShare``, root's and those the bus cannot place on their own. Over its share's
/// budget (``CallerBudget``) or waiting-call limit a call is answered
/// `org.reachabilityd.Error.Busy` at once; otherwise it waits its turn (``FairTurns``), so
/// that shares are served in turn and a flood from one delays another's call by one call, not
/// by the flood. Confined to the connection's queue.
final class CallAdmission: @unchecked Sendable {
    /// The most calls one caller may have waiting; more get `Busy`. (dbus-daemon's system bus
    /// lets a connection have 128 calls pending, so this guards other bus configurations.)
    static let waitingCallsPerCaller = 256
    private let connection: BusConnection
    /// Method calls waiting their turn, one per share in turn, within each share's part of the
    /// queue's time.
    private let turns: FairTurns<BusMethodCall>
    /// Whose share each caller (unique name) draws on, once the bus told its user.
    private var shareOfCaller: [String: CallerShare] = [:]
    /// The calls of callers whose user the bus is being asked, in order.
    private var awaitingUser: [String: [BusMethodCall]] = [:]

    /// - Parameter connection: the bus connection (its queue is this object's queue).
    init(connection: BusConnection) {
        self.connection = connection
        turns = FairTurns(queue: connection.queue) { $0.serve() }
    }

    /// The share `caller` (a unique name) draws on: its user's, or its own until the bus told
    /// its user (and when it is root or the bus cannot tell).
    func share(of caller: String) -> CallerShare {
        shareOfCaller[caller] ?? CallerShare(connection: caller)
    }

    /// Takes a method call: it waits for its caller's user, waits its turn, or is answered
    /// `Busy` now.
    func take(_ call: BusMethodCall) {
        let sender = call.sender
        if let share = shareOfCaller[sender] {
            admitOrRefuse(call, share: share.name)
            return
        }
        let parked = awaitingUser[sender, default: []]
        guard parked.count < Self.waitingCallsPerCaller else { return refuse(call, share: sender) }
        awaitingUser[sender] = parked + [call]
        if parked.isEmpty { askUser(of: sender) }
    }

    /// Forgets a caller that left the bus and the calls it left waiting (never answered: nobody
    /// is there to read them); a root caller's budget goes with it, a user's stays with the user.
    ///
    /// - Returns: its share when that was the share's last connection (what it watched can go).
    func forgetCaller(_ name: String) -> CallerShare? {
        awaitingUser[name] = nil
        let share = shareOfCaller.removeValue(forKey: name)
        if share?.isUser == false { turns.forget(name) }
        turns.removeAll(from: share?.name ?? name, where: { $0.sender == name })
        guard let share, !shareOfCaller.values.contains(share) else { return nil }
        return share
    }

    /// Asks the bus which user `caller` runs as, then admits its parked calls under its share
    /// (its own unique name when it is root or the bus cannot tell).
    private func askUser(of caller: String) {
        let admitParked: (CallerShare) -> Void = { [weak self] share in
            guard let self, let parked = awaitingUser.removeValue(forKey: caller) else { return }
            shareOfCaller[caller] = share
            for call in parked { admitOrRefuse(call, share: share.name) }
        }
        do throws(SystemError) {
            try connection.askUnixUser(of: caller) { user in
                admitParked(CallerShare(connection: caller, busUser: user))
            }
        } catch {
            Log.debug("\(error); \(caller) gets a share of its own.")
            admitParked(CallerShare(connection: caller))
        }
    }

    /// Queues `call` under `share` unless the share is over its budget or waiting-call limit;
    /// then it is answered `Busy`.
    private func admitOrRefuse(_ call: BusMethodCall, share: String) {
        guard turns.admits(share), turns.count(of: share) < Self.waitingCallsPerCaller else {
            return refuse(call, share: share)
        }
        turns.append(call, from: share)
    }

    private func refuse(_ call: BusMethodCall, share: String) {
        let message = "\(share) used its share of reachabilityd's time (\(Int(turns.budget.refillPerSecond * 1000)) ms per second, "
            + "\(Self.waitingCallsPerCaller) calls waiting); try again shortly"
        call.reply(.error(BusError(name: BusContract.busyError, message: message)))
    }
}
