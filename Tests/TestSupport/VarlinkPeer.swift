import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Clients of the daemon's Varlink socket for the tests: the Python `varlink` package from PyPI
/// (a client nobody here wrote, in the venv `make deps` makes: scripts/install-deps.sh), and a
/// raw connection that sends whatever bytes a test chooses.
package enum VarlinkPeer {
    /// The venv's Python, with the `varlink` package.
    package static var python: String { "\(TestPaths.repositoryRoot)/.build/test-tools/varlink-venv/bin/python" }
    /// The client script (`testbed/clients/varlink-client.py`).
    package static var script: String { "\(TestPaths.repositoryRoot)/testbed/clients/varlink-client.py" }

    /// The socket a daemon started by ``DaemonProcess`` serves: in its `$RUNTIME_DIRECTORY`.
    package static func socketPath(in directory: TemporaryDirectory) -> String {
        directory.file("runtime") + "/org.reachabilityd.Reachability"
    }

    /// Runs the Python client with `arguments` after the socket; its one JSON object.
    ///
    /// - Throws: `HarnessError` when the venv is missing or the client fails.
    package static func python(_ socket: String, _ arguments: [String]) throws -> [String: Any] {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw HarnessError("no \(python): make deps (scripts/install-deps.sh) makes the venv with the varlink package")
        }
        return try FaultInjection.json(try Command.run(python, [script, socket] + arguments, timeout: .seconds(30)))
    }

    /// One call of `org.reachabilityd.Reachability` through the Python client: its reply
    /// (`["parameters": …]`) or its error (`["error": name, "parameters": …]`).
    package static func call(_ socket: String, _ method: String, _ parameters: [String: String] = [:]) throws -> [String: Any] {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: parameters), as: UTF8.self)
        return try python(socket, ["call", method, json])
    }
}

/// A raw stream connection to a Varlink socket: bytes out as given, bytes in until a NUL or the
/// daemon's end. Blocking, with a receive timeout so that a daemon that never answers fails the
/// test instead of hanging it.
package final class RawVarlinkConnection {
    private let descriptor: Int32

    /// Connects to `path`.
    ///
    /// - Throws: `HarnessError` when the connection fails.
    package init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw HarnessError("connect \(path): \(message)")
        }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
    }

    /// Sends `bytes` (as many as the socket takes; a closed peer ends the sending).
    package func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Sends `text` and a NUL.
    package func send(message text: String) {
        send(Array(text.utf8) + [0])
    }

    /// Shuts the sending side: the daemon reads the end of the stream.
    package func shutDownSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// The next message the daemon sends, decoded; nil when the connection ended first.
    ///
    /// - Throws: `HarnessError` when nothing comes within the receive timeout, or it is no JSON object.
    package func receive() throws -> [String: Any]? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = recv(descriptor, &byte, 1, 0)
            if count == 0 { return nil }
            if count < 0 {
                if errno == ECONNRESET { return nil }
                throw HarnessError("recv: \(String(cString: strerror(errno)))")
            }
            if byte == 0 { break }
            bytes.append(byte)
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw HarnessError("not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
        }
        return object
    }

    /// Whether the daemon closed the connection (what it sends before that is read and dropped).
    ///
    /// - Throws: `HarnessError` when the connection stays open past the receive timeout.
    package func isClosedByDaemon() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 || (count < 0 && errno == ECONNRESET) { return true }
            if count < 0 { throw HarnessError("the daemon kept the connection open: \(String(cString: strerror(errno)))") }
        }
    }
}
