#if canImport(Glibc)
import Glibc
#endif
import CProcessShims
import CurlTransport
import Dispatch
import ReachabilityCore
import SystemSupport

/// The check helper: this executable started by the daemon (``CheckHelperClient``) with
/// ``modeArgument``, running the connectivity check's exchanges and lookups with libcurl
/// (``CurlCheckClient``) for the daemon, over the socket pair at descriptor 3.
///
/// Its sandbox, before it reads a request: every other descriptor closed (0, 1 and 2 are
/// /dev/null: no bus, no journal), libcurl loaded, then no new privileges and its own seccomp
/// filter (``CheckHelperSandbox``: no file written, no program started). It inherits the unit's
/// sandbox besides (its user, `ProtectSystem=strict`, `IPAddressDeny=`...). It ends when the
/// daemon closes its end.
enum CheckHelperProcess {
    /// The hidden first argument that makes `reachabilityd` the check helper.
    static let modeArgument = "--connectivity-check-helper"
    /// The socket pair's descriptor in the helper.
    static let socket: Int32 = 3

    /// Runs the helper; never returns.
    static func run() -> Never {
        // No PR_SET_PDEATHSIG: its "parent" is the thread that started it, a libdispatch worker
        // that exits after 5 s without work. The daemon's end of the socket closes however the
        // daemon ends (the helper then exits at its next read), and the unit's cgroup goes with it.
        CReachProcess_closeDescriptorsAbove(socket)
        let queue = DispatchQueue(label: "org.reachabilityd.check-helper")
        let client = CurlCheckClient(queue: queue)
        // Before the filter: libcurl's and its TLS library's start-up read configuration files
        // (a missing libcurl is said per exchange, and tried again then).
        _ = client.unavailability
        if let program = CheckHelperSandbox.program() {
            do throws(SystemError) {
                try CheckHelperSandbox.install(program)
            } catch {
                exit(EXIT_FAILURE)
            }
        }
        let server = Server(client: client, queue: queue)
        queue.async { server.start() }
        dispatchMain()
    }

    /// Reads requests from the socket and answers each with what the client got.
    private final class Server: @unchecked Sendable {
        private let client: CurlCheckClient
        private let queue: DispatchQueue
        private var reader: DescriptorReadSource?
        /// The client's token of each request in flight, by the daemon's.
        private var clientTokens: [Int: Int] = [:]

        init(client: CurlCheckClient, queue: DispatchQueue) {
            self.client = client
            self.queue = queue
        }

        func start() {
            let reader = DescriptorReadSource(descriptor: CheckHelperProcess.socket, queue: queue) {}
            self.reader = reader
            reader.start { [self] in readRequests() }
        }

        private func readRequests() {
            var buffer = [UInt8](repeating: 0, count: CheckHelperMessage.maximumSize)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(CheckHelperProcess.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
                // The daemon closed its end (or sent what it never sends): nothing more to do.
                guard count > 0, let message = try? CheckHelperMessage(decoding: buffer[..<count]) else { exit(EXIT_SUCCESS) }
                serve(message)
            }
        }

        private func serve(_ message: CheckHelperMessage) {
            switch message {
            case .exchange(let token, let request):
                if let why = client.unavailability { return answer(.unavailable(token: token, why: CheckHelperMessage.plainText(why))) }
                clientTokens[token] = client.start(request) { [self] outcome, seconds, lookup in
                    guard clientTokens.removeValue(forKey: token) != nil else { return }
                    answer(CheckHelperMessage.answer(token: token, outcome: outcome, seconds: seconds, lookup: lookup))
                }
            case .lookUp(let token, let host, let family):
                client.lookUpAddresses(of: host, family: family) { [self] addresses in
                    answer(.lookedUp(token: token, addresses: addresses.prefix(CheckHelperMessage.addressLimit).map(\.description)))
                }
            case .cancel(let token):
                if let clientToken = clientTokens.removeValue(forKey: token) { client.cancel(clientToken) }
            case .exchanged, .unavailable, .lookedUp:
                break
            }
        }

        private func answer(_ message: CheckHelperMessage) {
            let datagram = message.encoded
            let sent = datagram.withUnsafeBytes { send(CheckHelperProcess.socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The daemon is gone (or stopped reading: it kills a helper it stops waiting for).
            if sent < 0 { exit(EXIT_SUCCESS) }
        }
    }
}
