#if canImport(Glibc)
import Glibc
#endif
import CCurlShims
import Dispatch
import ReachabilityCore
import SystemSupport

/// The active check's HTTP client: libcurl's multi interface driven from Dispatch on the
/// daemon's queue. One `DispatchSourceRead` watches an epoll instance holding the sockets
/// libcurl asks for, one `DispatchSourceTimer` is libcurl's timer: nothing ever blocks the queue.
/// A URL's host name is resolved first, by ``CheckNameLookups`` (the system resolver, away from
/// the queue, at most a few lookups out however many exchanges are given up on), and handed to
/// libcurl with the transfer; the exchange's timeout covers both. libcurl is loaded with
/// `dlopen` at the first exchange, so a daemon without checks never loads it.
package final class CurlCheckClient: HTTPCheckClient, @unchecked Sendable {
    /// The `User-Agent` of every exchange.
    package static let userAgent = "reachabilityd (connectivity check)"
    /// The most body bytes kept per exchange.
    package static let bodyLimit = HTTPCheckOutcome.bodyLimit

    private let queue: DispatchQueue
    private var multi: OpaquePointer?
    private var readiness: DispatchSourceRead?
    private var timer: DispatchSourceTimer?
    private let nameLookups: CheckNameLookups

    /// Where an exchange stands.
    private enum Stage {
        /// Waiting for the addresses of the URL's host (`port`: the URL's), given up on when
        /// `deadline` fires.
        case resolving(host: String, port: Int, deadline: DispatchSourceTimer)
        /// libcurl's transfer, after `lookupSeconds` spent resolving the host (0: none).
        case transferring(OpaquePointer, lookupSeconds: Double)
    }

    /// An exchange in flight.
    private struct Exchange {
        var request: HTTPCheckRequest
        var started: DispatchTime
        var stage: Stage
        var completion: @Sendable (HTTPCheckOutcome, Double, NameLookupEvidence?) -> Void
        /// What the lookup of the URL's host name came to; nil before it answers, or with none.
        var lookup: NameLookupEvidence?

        /// The seconds since it started.
        var elapsedSeconds: Double { Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9 }
    }

    /// The exchanges in flight by token, and the tokens of those transferring by transfer.
    private var exchanges: [Int: Exchange] = [:]
    private var tokens: [OpaquePointer: Int] = [:]
    private var nextToken = 1

    /// Creates a client confined to `queue`; nothing is loaded or opened until the first exchange.
    package init(queue: DispatchQueue) {
        self.queue = queue
        nameLookups = CheckNameLookups(queue: queue)
    }

    deinit {
        // (A lookup's answer finds no client: its completion holds the client weakly.)
        for exchange in exchanges.values {
            switch exchange.stage {
            case .resolving(_, _, let deadline): deadline.cancel()
            case .transferring(let transfer, _): CReachCurl_transfer_free(multi, transfer)
            }
        }
        readiness?.cancel()
        timer?.cancel()
        if let multi { CReachCurl_multi_free(multi) }
    }

    package func start(_ request: HTTPCheckRequest, completion: @escaping @Sendable (HTTPCheckOutcome, Double, NameLookupEvidence?) -> Void) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        let token = nextToken
        nextToken += 1
        do throws(HTTPCheckFailure) {
            let multi = try openMulti()
            guard let (host, port) = Self.hostToResolve(in: request.url) else {
                let transfer = try Self.startTransfer(request, timeoutSeconds: request.timeoutSeconds, resolve: nil, in: multi)
                exchanges[token] = Exchange(request: request, started: .now(), stage: .transferring(transfer, lookupSeconds: 0), completion: completion)
                tokens[transfer] = token
                return token
            }
            let deadline = DispatchSource.makeTimerSource(queue: queue)
            deadline.setEventHandler { [weak self] in self?.resolvingTimedOut(token) }
            deadline.schedule(deadline: .now() + .milliseconds(Self.milliseconds(request.timeoutSeconds)))
            deadline.activate()
            exchanges[token] = Exchange(request: request, started: .now(), stage: .resolving(host: host, port: port, deadline: deadline), completion: completion)
            nameLookups.resolve(CheckNameLookups.Key(host: host, family: request.family), for: token) { [weak self] answer in
                self?.resolved(token, answer)
            }
        } catch {
            // Reported like any other failed exchange, from the queue (never re-entrantly).
            queue.async { completion(.failed(error.description), 0, nil) }
        }
        return token
    }

    /// Why libcurl cannot be used; nil once it is loaded. Each call tries again while it is
    /// not: it may have been installed since.
    package var unavailability: String? {
        var why = [CChar](repeating: 0, count: 512)
        guard CReachCurl_load(&why, why.count) != 0 else { return nil }
        return "libcurl could not be loaded: \(String(nulTerminated: why))"
    }

    package func cancel(_ token: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let exchange = exchanges.removeValue(forKey: token) else { return }
        switch exchange.stage {
        case .resolving(_, _, let deadline):
            deadline.cancel()
            nameLookups.abandon(token)
        case .transferring(let transfer, _):
            tokens[transfer] = nil
            CReachCurl_transfer_free(multi, transfer)
        }
    }

    package func lookUpAddresses(of host: String, family: AddressFamily, completion: @escaping @Sendable ([IPAddress]) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        let token = nextToken
        nextToken += 1
        nameLookups.resolve(CheckNameLookups.Key(host: host, family: family), for: token) { answer in
            guard case .addresses(let literals) = answer else { return completion([]) }
            completion(literals.compactMap(IPAddress.init))
        }
    }

    /// The host name of `url` to resolve before its transfer, and the port, as libcurl reads
    /// the URL; nil when there is none to resolve (a literal address), or when libcurl cannot
    /// read the URL (its transfer then fails saying why).
    private static func hostToResolve(in url: String) -> (host: String, port: Int)? {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var port = 0
        guard CReachCurl_url_host(url, &host, host.count, &port) == 1 else { return nil }
        return (String(nulTerminated: host), port)
    }

    /// The lookup of `token`'s host answered: its transfer starts, to those addresses, with
    /// what is left of its time; or it ends, the name unresolved.
    private func resolved(_ token: Int, _ answer: CheckNameLookups.Answer) {
        guard let exchange = exchanges[token], case .resolving(let host, let port, let deadline) = exchange.stage, let multi else { return }
        deadline.cancel()
        let lookupSeconds = exchange.elapsedSeconds
        switch answer {
        case .failed(let why, let resolverAnswered):
            exchanges[token]?.lookup = resolverAnswered ? .answered : .failed(why)
            finish(token, .failed("Could not resolve host: \(host) (\(why))"), seconds: lookupSeconds)
        case .addresses(let addresses):
            exchanges[token]?.lookup = .answered
            // CURLOPT_RESOLVE: "HOST:PORT:ADDRESS,…", IPv6 addresses in brackets.
            let literals = exchange.request.family == .ipv6 ? addresses.map { "[\($0)]" } : addresses
            let entry = "\(host):\(port):\(literals.joined(separator: ","))"
            do throws(HTTPCheckFailure) {
                let remaining = exchange.request.timeoutSeconds - lookupSeconds
                let transfer = try Self.startTransfer(exchange.request, timeoutSeconds: remaining, resolve: entry, in: multi)
                exchanges[token]?.stage = .transferring(transfer, lookupSeconds: lookupSeconds)
                tokens[transfer] = token
            } catch {
                finish(token, .failed(error.description), seconds: lookupSeconds)
            }
        }
    }

    /// `token`'s time ran out while its host's lookup was still out (which runs on, for the
    /// next exchange of that name to join); said as libcurl says it of its own resolving.
    private func resolvingTimedOut(_ token: Int) {
        guard let exchange = exchanges[token], case .resolving = exchange.stage else { return }
        nameLookups.abandon(token)
        let milliseconds = Self.milliseconds(exchange.request.timeoutSeconds)
        exchanges[token]?.lookup = .failed("no answer within \(milliseconds) ms")
        finish(token, .failed("Resolving timed out after \(milliseconds) milliseconds", silent: true), seconds: exchange.elapsedSeconds)
    }

    /// Ends `token`'s exchange before any transfer, with `outcome`.
    private func finish(_ token: Int, _ outcome: HTTPCheckOutcome, seconds: Double) {
        guard let exchange = exchanges.removeValue(forKey: token) else { return }
        if case .resolving(_, _, let deadline) = exchange.stage { deadline.cancel() }
        exchange.completion(outcome, seconds, exchange.lookup)
    }

    /// `seconds` in whole milliseconds, at least 1 (libcurl reads a timeout of 0 as none).
    private static func milliseconds(_ seconds: Double) -> Int {
        max(1, Int(seconds * 1000))
    }

    /// Why an exchange could not start.
    private struct HTTPCheckFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The multi handle, its readiness source and timer, made at the first exchange.
    private func openMulti() throws(HTTPCheckFailure) -> OpaquePointer {
        if let multi { return multi }
        if let unavailability { throw HTTPCheckFailure(description: unavailability) }
        var error: Int32 = 0
        let onTimer: CReachCurl_TimerCallback = { milliseconds, context in
            Unmanaged<CurlCheckClient>.fromOpaque(context!).takeUnretainedValue().setTimer(milliseconds: milliseconds)
            return 0
        }
        guard let multi = CReachCurl_multi_new(onTimer, Unmanaged.passUnretained(self).toOpaque(), &error) else {
            let cause = error < 0 ? SystemError(action: "create an epoll instance for libcurl", errno: -error).description : "libcurl's multi handle: out of memory"
            throw HTTPCheckFailure(description: cause)
        }
        self.multi = multi
        let readiness = DispatchSource.makeReadSource(fileDescriptor: CReachCurl_multi_descriptor(multi), queue: queue)
        readiness.setEventHandler { [weak self] in self?.serveReadySockets() }
        readiness.activate()
        self.readiness = readiness
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            guard let self, let multi = self.multi else { return }
            CReachCurl_multi_serve_timeout(multi)
            self.finishDoneExchanges()
        }
        timer.activate()
        self.timer = timer
        return multi
    }

    /// Starts `request`'s transfer, given up on after `timeoutSeconds`, to the addresses in
    /// `resolve` (a CURLOPT_RESOLVE entry; nil: nothing to resolve, see ``hostToResolve(in:)``).
    private static func startTransfer(
        _ request: HTTPCheckRequest, timeoutSeconds: Double, resolve: String?, in multi: OpaquePointer
    ) throws(HTTPCheckFailure) -> OpaquePointer {
        var failure: UnsafePointer<CChar>?
        let transfer = request.url.withCString { url in
            request.interfaceName.withCString { interface in
                userAgent.withCString { agent in
                    withOptionalCString(request.accept) { accept in
                        withOptionalCString(request.caFile) { caFile in
                            withOptionalCString(resolve) { resolve in
                                var parameters = CReachCurl_Request(
                                    url: url, family: request.family == .ipv6 ? 6 : 4, interfaceName: interface,
                                    timeoutMilliseconds: milliseconds(timeoutSeconds), accept: accept, caFile: caFile,
                                    userAgent: agent, bodyLimit: bodyLimit, resolve: resolve
                                )
                                return CReachCurl_transfer_start(multi, &parameters, &failure)
                            }
                        }
                    }
                }
            }
        }
        guard let transfer else { throw HTTPCheckFailure(description: failure.map { String(cString: $0) } ?? "libcurl refused the request") }
        return transfer
    }

    /// libcurl's timer callback: (re)arms the Dispatch timer, or disarms it for -1. It only
    /// records: libcurl is served when the timer fires, on the queue.
    private func setTimer(milliseconds: Int) {
        guard let timer else { return }
        timer.schedule(deadline: milliseconds < 0 ? .distantFuture : .now() + .milliseconds(milliseconds))
    }

    private func serveReadySockets() {
        guard let multi else { return }
        do throws(SystemError) {
            try sdCall("watch libcurl's sockets (epoll)") { CReachCurl_multi_serve_ready(multi) }
        } catch {
            Log.warning("\(error); the check in flight may end by its timeout.")
        }
        finishDoneExchanges()
    }

    /// Hands every finished exchange's outcome to its completion.
    private func finishDoneExchanges() {
        guard let multi else { return }
        var result: Int32 = 0
        while let transfer = CReachCurl_next_done(multi, &result) {
            let response = CReachCurl_response(transfer)
            let outcome: HTTPCheckOutcome
            if result == 0 {
                outcome = .response(
                    status: response.status, redirect: response.redirectURL.map { String(cString: $0) },
                    body: Array(UnsafeBufferPointer(start: response.body, count: response.bodyLength))
                )
            } else {
                let detail = response.errorText.map { String(cString: $0) } ?? ""
                var text = detail.isEmpty ? String(cString: CReachCurl_strerror(result)) : detail
                // The system call's own errno says more than "Couldn't connect to server".
                if response.systemErrno != 0 { text += " (\(SystemError.describe(errno: Int32(response.systemErrno))))" }
                outcome = .failed(text, silent: result == CReachCurl_OPERATION_TIMEDOUT || response.systemErrno == Int(EPERM))
            }
            let transferSeconds = Double(response.totalMicroseconds) / 1_000_000
            CReachCurl_transfer_free(multi, transfer)
            guard let token = tokens.removeValue(forKey: transfer), let exchange = exchanges.removeValue(forKey: token),
                  case .transferring(_, let lookupSeconds) = exchange.stage
            else { continue }
            exchange.completion(outcome, lookupSeconds + transferSeconds, exchange.lookup)
        }
    }
}

extension String {
    /// The text of a C buffer up to its first NUL, as UTF-8.
    init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Calls `body` with `text` as a C string, or with nil.
private func withOptionalCString<Result>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
