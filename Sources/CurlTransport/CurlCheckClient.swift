#if canImport(Glibc)
import Glibc
#endif
import CCurlShims
import Dispatch
import ReachabilityCore
import SystemSupport

/// The active check's HTTP client: libcurl's multi interface driven from Dispatch on the
/// daemon's queue. One `DispatchSourceRead` watches an epoll instance holding the sockets
/// libcurl asks for, one `DispatchSourceTimer` is libcurl's timer: nothing ever blocks the queue
/// (name resolution runs in libcurl's resolver thread). libcurl is loaded with `dlopen` at the
/// first exchange, so a daemon without checks never loads it.
public final class CurlCheckClient: HTTPCheckClient, @unchecked Sendable {
    /// The `User-Agent` of every exchange.
    public static let userAgent = "reachabilityd (connectivity check)"
    /// The most body bytes kept per exchange (a portal page's start, an API's JSON).
    public static let bodyLimit = 16 * 1024

    private let queue: DispatchQueue
    private var multi: OpaquePointer?
    private var readiness: DispatchSourceRead?
    private var timer: DispatchSourceTimer?
    /// The exchanges in flight by token, and their tokens by transfer.
    private var exchanges: [Int: (transfer: OpaquePointer, completion: @Sendable (HTTPCheckOutcome, Double) -> Void)] = [:]
    private var tokens: [OpaquePointer: Int] = [:]
    private var nextToken = 1

    /// Creates a client confined to `queue`; nothing is loaded or opened until the first exchange.
    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    deinit {
        for exchange in exchanges.values { CReachCurl_transfer_free(multi, exchange.transfer) }
        readiness?.cancel()
        timer?.cancel()
        if let multi { CReachCurl_multi_free(multi) }
    }

    public func start(_ request: HTTPCheckRequest, completion: @escaping @Sendable (HTTPCheckOutcome, Double) -> Void) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        let token = nextToken
        nextToken += 1
        do throws(HTTPCheckFailure) {
            let multi = try openMulti()
            let transfer = try Self.startTransfer(request, in: multi)
            exchanges[token] = (transfer, completion)
            tokens[transfer] = token
        } catch {
            // Reported like any other failed exchange, from the queue (never re-entrantly).
            queue.async { completion(.failed(error.description), 0) }
        }
        return token
    }

    public var unavailability: String? {
        CReachCurl_load().map { "libcurl could not be loaded: \(String(cString: $0))" }
    }

    public func cancel(_ token: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let exchange = exchanges.removeValue(forKey: token) else { return }
        tokens[exchange.transfer] = nil
        CReachCurl_transfer_free(multi, exchange.transfer)
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

    private static func startTransfer(_ request: HTTPCheckRequest, in multi: OpaquePointer) throws(HTTPCheckFailure) -> OpaquePointer {
        var failure: UnsafePointer<CChar>?
        let transfer = request.url.withCString { url in
            request.interfaceName.withCString { interface in
                userAgent.withCString { agent in
                    withOptionalCString(request.accept) { accept in
                        withOptionalCString(request.caFile) { caFile in
                            var parameters = CReachCurl_Request(
                                url: url, family: request.family == .ipv6 ? 6 : 4, interfaceName: interface,
                                timeoutMilliseconds: Int(request.timeoutSeconds * 1000), accept: accept, caFile: caFile,
                                userAgent: agent, bodyLimit: bodyLimit
                            )
                            return CReachCurl_transfer_start(multi, &parameters, &failure)
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
            let seconds = Double(response.totalMicroseconds) / 1_000_000
            CReachCurl_transfer_free(multi, transfer)
            guard let token = tokens.removeValue(forKey: transfer), let exchange = exchanges.removeValue(forKey: token) else { continue }
            exchange.completion(outcome, seconds)
        }
    }
}

/// Calls `body` with `text` as a C string, or with nil.
private func withOptionalCString<Result>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
