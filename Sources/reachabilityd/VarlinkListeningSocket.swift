#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import ReachabilityCore
import ReachabilityService
import SystemSupport

/// The listening socket of the Varlink interface: the one `reachabilityd.socket` passes
/// (`LISTEN_FDS`), or one the daemon binds itself at
/// `$RUNTIME_DIRECTORY/org.reachabilityd.Reachability`, mode 0666 (any local user may ask, as
/// for networkd's socket; callers are told apart by their credentials). Non-blocking, close-on-exec.
enum VarlinkListeningSocket {
    /// The socket systemd passed, else a new one in the runtime directory; nil when there is
    /// neither (no `$RUNTIME_DIRECTORY`: a daemon started by hand serves only the bus).
    ///
    /// - Returns: the descriptor and its path (what the log says).
    static func open() throws(SystemError) -> (descriptor: Int32, path: String)? {
        if let passed = try passedSocket() { return (passed, "the socket systemd passed") }
        guard let variable = getenv("RUNTIME_DIRECTORY") else { return nil }
        // systemd separates several runtime directories with colons: the first is the unit's own.
        let directory = String(cString: variable).split(separator: ":").first.map(String.init) ?? ""
        guard !directory.isEmpty else { return nil }
        let path = directory + "/" + VarlinkContract.socketName
        return (try bind(path), path)
    }

    /// The stream socket on a path that the service manager passed, if any, made non-blocking
    /// (accepting on a blocking one would stall the queue when a peer leaves in between).
    /// The corresponding C functions are `sd_listen_fds` and `sd_is_socket_unix`.
    private static func passedSocket() throws(SystemError) -> Int32? {
        let count = try sdCall("read LISTEN_FDS") { sd_listen_fds(1) }
        for descriptor in SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + count) where sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 {
            let flags = try valueOrErrno("read the flags of the passed socket") { fcntl(descriptor, F_GETFL) }
            try valueOrErrno("make the passed socket non-blocking") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
            return descriptor
        }
        return nil
    }

    /// A new listening socket at `path`, replacing a socket a previous run left there.
    /// The corresponding C functions are `socket`, `bind`, `chmod` and `listen`.
    private static func bind(_ path: String) throws(SystemError) -> Int32 {
        guard var address = UnixSocketAddress.of(path) else { throw SystemError(action: "bind \(path)", errno: ENAMETOOLONG) }
        var status = stat()
        if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
        let descriptor = try valueOrErrno("open the Varlink socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do throws(SystemError) {
            try withUnsafePointer(to: &address.address) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress throws(SystemError) in
                    _ = try valueOrErrno("bind \(path)") { Glibc.bind(descriptor, socketAddress, address.length) }
                }
            }
            // After bind: the daemon's UMask=0077 made it the daemon's alone.
            try valueOrErrno("make \(path) mode 0666") { chmod(path, 0o666) }
            try valueOrErrno("listen on \(path)") { listen(descriptor, SOMAXCONN) }
            return descriptor
        } catch {
            close(descriptor)
            throw error
        }
    }
}
