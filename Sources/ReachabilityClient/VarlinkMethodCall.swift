#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import SystemSupport

/// Why a call on the daemon's Varlink socket got no reply.
package enum VarlinkCallFailure: Error, Sendable, CustomStringConvertible {
    /// The socket could not be reached, or the connection ended before the reply: no socket
    /// there, or no daemon serving it.
    case unreachable(SystemError)
    /// No reply within the time given.
    case timedOut(path: String)
    /// The daemon replied with the Varlink error of this name.
    case error(String, parameters: [String: JSONValue])
    /// What came back is no Varlink reply.
    case unreadable(path: String, VarlinkError)

    package var description: String {
        switch self {
        case .unreachable(let error): "Cannot reach reachabilityd's Varlink socket: \(error)."
        case .timedOut(let path): "No answer from reachabilityd's Varlink socket \(path) in time."
        case .error(let name, let parameters):
            if case .string(let message)? = parameters["message"] { "reachabilityd answered \(name): \(message)." } else { "reachabilityd answered \(name)." }
        case .unreadable(let path, let error): "reachabilityd's Varlink socket \(path) sent what is no Varlink reply (\(error))."
        }
    }
}

/// One call of a method of `org.reachabilityd.Reachability` on the daemon's Varlink socket, on
/// a connection of its own closed after the reply: what a one-shot question (`Explain`,
/// `Metrics`, `CheckDestination`) costs the daemon is one short connection.
package enum VarlinkMethodCall {
    /// Calls `member` with `parameters` on the socket at `path` and returns the reply's parameters.
    /// Blocks until the reply, the end of the connection or `timeout` (each read and write waits
    /// at most that long): never call it on a queue that must stay responsive.
    /// The corresponding C functions are `setsockopt`, `send` and `recv`.
    package static func call(
        _ member: String, parameters: [String: JSONValue] = [:], path: String, timeout: Duration
    ) -> Result<[String: JSONValue], VarlinkCallFailure> {
        let descriptor: Int32
        do throws(SystemError) {
            descriptor = try connect(to: path)
        } catch {
            return .failure(.unreachable(error))
        }
        defer { close(descriptor) }
        do throws(SystemError) {
            let seconds = max(timeout, .milliseconds(1)).components
            var limit = timeval(tv_sec: Int(seconds.seconds), tv_usec: Int(seconds.attoseconds / 1_000_000_000_000))
            for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
                _ = try valueOrErrno("set the timeout of the socket for \(path)") {
                    setsockopt(descriptor, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
                }
            }
            let call = VarlinkCall(method: VarlinkContract.interface + "." + member, parameters: parameters)
            try writeAll(call.encoded, to: descriptor, action: "call \(member) on \(path)")
            var framer = VarlinkFramer()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                do throws(VarlinkError) {
                    if let message = try framer.next() {
                        let reply = try VarlinkReply(decoding: message)
                        if let name = reply.error { return .failure(.error(name, parameters: reply.parameters)) }
                        return .success(reply.parameters)
                    }
                } catch {
                    return .failure(.unreadable(path: path, error))
                }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .failure(.timedOut(path: path)) }
                if count < 0 { throw SystemError(action: "read the reply to \(member) on \(path)", errno: errno) }
                if count == 0 { throw SystemError(action: "read the reply to \(member) on \(path)", errno: ECONNRESET) }
                framer.append(buffer[..<count])
            }
        } catch {
            return .failure(.unreachable(error))
        }
    }

    /// A blocking stream socket connected to the Unix socket at `path`.
    /// The corresponding C functions are `socket` and `connect`.
    static func connect(to path: String) throws(SystemError) -> Int32 {
        guard let (address, length) = UnixSocketAddress.of(path) else { throw SystemError(action: "connect to \(path)", errno: EINVAL) }
        var socketAddress = address
        let descriptor = try valueOrErrno("open a socket for \(path)") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do throws(SystemError) {
            try withUnsafePointer(to: &socketAddress) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { name throws(SystemError) in
                    _ = try valueOrErrno("connect to \(path)") { Glibc.connect(descriptor, name, length) }
                }
            }
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }
}
