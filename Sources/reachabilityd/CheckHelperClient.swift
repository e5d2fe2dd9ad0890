#if canImport(Glibc)
import Glibc
#endif
import CProcessShims
import Dispatch
import ReachabilityCore
import SystemSupport

/// The daemon's HTTP client for the connectivity check: every exchange and lookup runs in the
/// check helper (``CheckHelperProcess``, this executable started again), asked over a
/// `SOCK_SEQPACKET` socket pair, so libcurl, its TLS library and a server's bytes never reach the
/// process that holds the bus name. The helper starts with the first request and is kept while
/// checks are on (one exchange then costs two datagrams, not a start); one that dies is started
/// again at the next request.
///
/// A helper never holds the daemon up: its answers are read from a Dispatch source, and a
/// request it has not answered by its own time limit plus ``graceSeconds`` (a lookup: by
/// ``lookupSeconds``) has the helper killed, every request it held answered as failed, and the
/// next request starts a new one. Confined to `queue`.
final class CheckHelperClient: HTTPCheckClient, @unchecked Sendable {
    /// Beyond an exchange's own limit, which the helper enforces, the time it has to answer.
    static let graceSeconds = 2.0
    /// The time a lookup has: glibc's resolver gives up after 30 s with its defaults.
    static let lookupSeconds = 40.0

    private let queue: DispatchQueue
    private let executable: String

    /// The helper running now.
    private struct Helper {
        var pid: pid_t
        var socket: Int32
        var reader: DescriptorReadSource
    }
    private var helper: Helper?

    /// A request the helper holds.
    private enum Pending {
        case exchange(@Sendable (HTTPCheckOutcome, Double, NameLookupEvidence?) -> Void)
        case lookup(@Sendable ([IPAddress]) -> Void)
    }
    private var pending: [Int: (request: Pending, deadline: DispatchTime)] = [:]
    /// Requests to be answered as failed at a later turn of the queue (never from inside a call
    /// of the engine's), unless cancelled first.
    private var failing: [Int: (request: Pending, why: String)] = [:]
    private var nextToken = 1
    private var watchdog: DispatchSourceTimer?
    /// Why the helper said the last exchange could not run at all, until it is asked.
    private var reportedUnavailability: String?

    /// A client confined to `queue` starting `executable` (this program) as its helper; nothing
    /// starts before the first request.
    init(queue: DispatchQueue, executable: String = "/proc/self/exe") {
        self.queue = queue
        self.executable = executable
    }

    deinit {
        if let helper { stop(helper) }
        watchdog?.cancel()
    }

    func start(_ request: HTTPCheckRequest, completion: @escaping @Sendable (HTTPCheckOutcome, Double, NameLookupEvidence?) -> Void) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        let token = take()
        send(.exchange(token: token, request: request), token: token, awaiting: .exchange(completion), seconds: request.timeoutSeconds + Self.graceSeconds)
        return token
    }

    /// What the helper said of the last exchange it could not run at all (libcurl missing),
    /// said once: the engine asks after each exchange and stops checking until a reload, whose
    /// next exchange has the helper try again.
    var unavailability: String? {
        defer { reportedUnavailability = nil }
        return reportedUnavailability
    }

    func cancel(_ token: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        if failing.removeValue(forKey: token) != nil { return }
        guard pending.removeValue(forKey: token) != nil, let helper else { return }
        // Lost only when the helper is gone, whose requests are gone with it.
        _ = write(.cancel(token: token), to: helper)
    }

    func lookUpAddresses(of host: String, family: AddressFamily, completion: @escaping @Sendable ([IPAddress]) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        let token = take()
        send(.lookUp(token: token, host: host, family: family), token: token, awaiting: .lookup(completion), seconds: Self.lookupSeconds)
    }

    /// Checks are off: the helper ends (its socket closed, it exits; killed as well, should it
    /// not); the next request starts another.
    func releaseResources() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let helper else { return }
        Log.debug("Connectivity check: checks are off; the check helper (pid \(helper.pid)) ends.")
        end(helper)
    }

    private func take() -> Int {
        defer { nextToken += 1 }
        return nextToken
    }

    /// Hands `message` (`token`'s) to the helper, started if none runs, expecting its answer
    /// within `seconds`; answers it as failed, from the queue, when no helper can take it.
    private func send(_ message: CheckHelperMessage, token: Int, awaiting request: Pending, seconds: Double) {
        // The helper holds the daemon's requests to the same rules (an API's URI comes from the
        // network): one it would refuse fails here, not by ending it.
        do throws(CheckHelperMessage.Malformed) {
            _ = try CheckHelperMessage(decoding: message.encoded)
        } catch {
            return fail(token, request, because: "the request cannot go to the check helper: \(error)")
        }
        var failure = "the check helper stopped taking requests"
        do throws(SystemError) {
            // A helper that died since its last answer (its end not read yet) is replaced once.
            for _ in 1...2 {
                let helper = try running()
                if write(message, to: helper) {
                    pending[token] = (request, .now() + .milliseconds(Int(seconds * 1000)))
                    armWatchdog()
                    return
                }
                end(helper)
            }
        } catch {
            // A fault of this host, like a missing libcurl: no exchange can run.
            failure = "the check helper could not start: \(error)"
            reportedUnavailability = failure
        }
        fail(token, request, because: failure)
    }

    /// Answers `token`'s request as failed at a later turn of the queue, unless it is cancelled first.
    private func fail(_ token: Int, _ request: Pending, because why: String) {
        failing[token] = (request, why)
        queue.async { [weak self] in
            guard let entry = self?.failing.removeValue(forKey: token) else { return }
            Self.answer(entry.request, failedBecause: entry.why)
        }
    }

    /// The helper running now, or a new one.
    private func running() throws(SystemError) -> Helper {
        if let helper { return helper }
        return try launch()
    }

    /// Sends `message` as one datagram; false when the helper is gone (or its queue is full).
    private func write(_ message: CheckHelperMessage, to helper: Helper) -> Bool {
        let datagram = message.encoded
        let sent = datagram.withUnsafeBytes { Glibc.send(helper.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        return sent == datagram.count
    }

    /// Starts a helper: a socket pair, this executable in its hidden mode with the other end.
    private func launch() throws(SystemError) -> Helper {
        var pair: [Int32] = [-1, -1]
        try valueOrErrno("create the check helper's socket pair") {
            socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair)
        }
        defer { close(pair[1]) }
        var pid: pid_t = 0
        let arguments = [executable, CheckHelperProcess.modeArgument]
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let error = CReachProcess_spawnWithSocket(executable, &cArguments, pair[1], &pid)
        guard error == 0 else {
            close(pair[0])
            throw SystemError(action: "start the check helper (\(executable))", errno: error)
        }
        let socket = pair[0]
        let reader = DescriptorReadSource(descriptor: socket, queue: queue) { close(socket) }
        let started = Helper(pid: pid, socket: socket, reader: reader)
        helper = started
        reader.start { [weak self] in self?.readAnswers(from: pid) }
        Log.debug("Connectivity check: the check helper started (pid \(pid)).")
        return started
    }

    /// Reads every answer waiting; a closed socket or a malformed answer ends the helper.
    private func readAnswers(from pid: pid_t) {
        var buffer = [UInt8](repeating: 0, count: CheckHelperMessage.maximumSize)
        // (An answer's completion may end this helper: then its socket is left unread.)
        while let helper, helper.pid == pid {
            let count = buffer.withUnsafeMutableBytes { recv(helper.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
            guard count > 0 else {
                Log.warning("Connectivity check: the check helper (pid \(pid)) exited; it starts again at the next check.")
                return end(helper)
            }
            do throws(CheckHelperMessage.Malformed) {
                deliver(try CheckHelperMessage(decoding: buffer[..<count]))
            } catch {
                // Nothing a helper sends is trusted: a helper that sends what it should not is
                // ended, and what it held fails.
                Log.warning("Connectivity check: the check helper (pid \(pid)) answered what it should not (\(error)); it starts again at the next check.")
                return end(helper, because: "the check helper's answer was refused: \(error)")
            }
        }
    }

    private func deliver(_ message: CheckHelperMessage) {
        switch message {
        case .exchanged(let token, let outcome, let seconds, let lookup):
            guard case .exchange(let completion)? = pending.removeValue(forKey: token)?.request else { return }
            completion(outcome, seconds, lookup)
        case .unavailable(let token, let why):
            guard case .exchange(let completion)? = pending.removeValue(forKey: token)?.request else { return }
            reportedUnavailability = why
            completion(.failed(why), 0, nil)
        case .lookedUp(let token, let addresses):
            guard case .lookup(let completion)? = pending.removeValue(forKey: token)?.request else { return }
            completion(addresses.compactMap(IPAddress.init))
        case .exchange, .lookUp, .cancel:
            break
        }
    }

    /// Kills `helper`; every request it held is answered as failed, `because`.
    private func end(_ helper: Helper, because why: String = "the check helper ended before answering") {
        stop(helper)
        self.helper = nil
        let abandoned = pending
        pending = [:]
        for (token, entry) in abandoned.sorted(by: { $0.key < $1.key }) {
            fail(token, entry.request, because: why)
        }
    }

    /// SIGKILL, the socket closed, the process reaped (a later turn of the queue retries, should
    /// it not have died yet).
    private func stop(_ helper: Helper) {
        kill(helper.pid, SIGKILL)
        helper.reader.cancel()
        reap(helper.pid, attempts: 50)
    }

    private func reap(_ pid: pid_t, attempts: Int) {
        guard waitpid(pid, nil, WNOHANG) == 0, attempts > 1 else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in self?.reap(pid, attempts: attempts - 1) }
    }

    private static func answer(_ request: Pending, failedBecause why: String) {
        switch request {
        case .exchange(let completion): completion(.failed(why), 0, nil)
        case .lookup(let completion): completion([])
        }
    }

    /// Arms the timer for the earliest deadline; at it, a helper still holding an overdue
    /// request is ended.
    private func armWatchdog() {
        let timer = watchdog ?? {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.watchdogFired() }
            timer.activate()
            watchdog = timer
            return timer
        }()
        timer.schedule(deadline: pending.values.map(\.deadline).min() ?? .distantFuture)
    }

    private func watchdogFired() {
        let now = DispatchTime.now()
        if let helper, pending.values.contains(where: { $0.deadline <= now }) {
            Log.warning("Connectivity check: the check helper (pid \(helper.pid)) did not answer in time; it is killed and starts again at the next check.")
            end(helper)
        }
        armWatchdog()
    }
}
