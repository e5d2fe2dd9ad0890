#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import SystemSupport

/// Reads `reachabilityd.conf` and its drop-ins (`reachabilityd.conf.d/*.conf`, in name order,
/// later files win) and parses them with ``ConfigurationParser``. The daemon reads them, and so
/// does the client library's in-process source, which then decides as the daemon would.
package struct ConfigurationFiles: Sendable {
    /// The daemon's main file.
    package static let defaultMainFile = "/etc/reachabilityd/reachabilityd.conf"

    /// The main file, e.g. /etc/reachabilityd/reachabilityd.conf. Its drop-in directory is the
    /// same path with ".d" appended.
    package var mainFile: String

    /// Files rooted at `mainFile`.
    package init(mainFile: String = Self.defaultMainFile) {
        self.mainFile = mainFile
    }

    /// The files a client reads to decide as the daemon would (the in-process source,
    /// `reachabilityctl wait --carrier-timeout`): those `$REACHABILITYD_CONFIG` names, else the
    /// daemon's.
    package static var clientFiles: ConfigurationFiles {
        guard let named = getenv("REACHABILITYD_CONFIG").map({ String(cString: $0) }), !named.isEmpty else { return ConfigurationFiles() }
        return ConfigurationFiles(mainFile: named)
    }

    /// Every existing file, in application order. A missing main file or directory is fine.
    package func paths() -> [String] {
        var paths: [String] = []
        if access(mainFile, F_OK) == 0 { paths.append(mainFile) }
        let directory = mainFile + ".d"
        if let stream = opendir(directory) {
            defer { closedir(stream) }
            var names: [String] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".conf") && !name.hasPrefix(".") { names.append(name) }
            }
            paths += names.sorted().map { "\(directory)/\($0)" }
        }
        return paths
    }

    /// Loads and parses the files.
    ///
    /// - Returns: the configuration, or nil after logging every problem (file, line, what);
    ///   the caller then keeps its last good configuration.
    package func load() -> DaemonConfiguration? {
        var files: [(path: String, text: String)] = []
        for path in paths() {
            do throws(SystemError) {
                files.append((path, try Self.read(path)))
            } catch {
                Log.error("\(error)")
                return nil
            }
        }
        do throws(InvalidConfiguration) {
            return try ConfigurationParser.parse(files)
        } catch {
            for diagnostic in error.diagnostics { Log.error("\(diagnostic)") }
            return nil
        }
    }

    /// Reads a whole (small) text file.
    private static func read(_ path: String) throws(SystemError) -> String {
        let descriptor = try valueOrErrno("open configuration file \(path)") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = try valueOrErrno("read configuration file \(path)") { chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) } }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > 1 << 20 { throw SystemError(action: "read configuration file \(path) (larger than 1 MiB)", errno: EFBIG) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
