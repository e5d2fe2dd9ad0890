#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import ReachabilityEngine
import ReachabilityService
import SystemSupport

/// `reachabilityd`: the command line of the daemon.
///
/// Parsed by hand rather than with swift-argument-parser: that package links Foundation's
/// Essentials into the static binary (22,000 symbols), which roughly doubles the daemon's
/// resident size for six options. reachabilityctl, a short-lived tool, uses the package.
@main
enum ReachabilityDaemonCommand {
    static func main() {
        let options: DaemonOptions
        switch DaemonOptions.parse(Array(CommandLine.arguments.dropFirst())) {
        case .run(let parsed):
            options = parsed
        case .help:
            print(DaemonOptions.help)
            exit(EXIT_SUCCESS)
        case .version:
            print(DaemonOptions.version)
            exit(EXIT_SUCCESS)
        case .invalid(let message):
            let text = "Error: \(message)\nUsage: \(DaemonOptions.usage)\n  See 'reachabilityd --help' for more information.\n"
            var bytes = Array(text.utf8)
            _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            exit(64)  // EX_USAGE, as swift-argument-parser and sysexits.h use
        }
        Log.maximumLevel = options.logLevel
        // Under systemd: structured entries (MESSAGE_ID and REACHABILITY_* fields) instead of lines.
        JournalLog.installIfStderrIsTheJournal()
        Daemon(configurationFiles: ConfigurationFiles(mainFile: options.configurationFile),
               sysfsRoot: options.sysfsRoot, receiveBufferBytes: options.receiveBufferBytes).run()
    }
}

/// The daemon's options, with their defaults.
struct DaemonOptions: Equatable {
    /// `--log-level`: the most verbose level logged.
    var logLevel = LogLevel.info
    /// `--config`: the configuration file; drop-ins in `<path>.d/*.conf`.
    var configurationFile = ConfigurationFiles.defaultMainFile
    /// `--sysfs-root`: where sysfs is mounted (tests inject a fake tree).
    var sysfsRoot = "/sys"
    /// `--receive-buffer`: the netlink receive buffer to request, in bytes.
    var receiveBufferBytes: Int32 = 8 * 1024 * 1024

    /// The daemon's version, printed by `--version`.
    static let version = "0.1.0"

    /// The synopsis.
    static let usage = "reachabilityd [--log-level <level>] [--config <path>] [--sysfs-root <path>] [--receive-buffer <bytes>]"

    /// The text of `--help`.
    static let help = """
        OVERVIEW: Publish the machine's network reachability on the D-Bus system bus.

        Reads rtnetlink link, address, route and rule events, asks the kernel which route it
        would use for a global IPv4 and IPv6 destination, and publishes the result as
        \(BusContract.busName) on the system bus ($DBUS_SYSTEM_BUS_ADDRESS when set).
        Logs go to stderr with journald priority prefixes. SIGHUP reloads the configuration;
        SIGTERM and SIGINT stop the daemon.

        USAGE: \(usage)

        OPTIONS:
          --log-level <level>     Most verbose level logged: error, warning, notice, info or
                                  debug. (default: info)
          --config <path>         The configuration file; drop-ins are read from
                                  <path>.d/*.conf. Reloaded on SIGHUP.
                                  (default: /etc/reachabilityd/reachabilityd.conf)
          --sysfs-root <path>     Where sysfs is mounted; tests point this at a fake tree.
                                  (default: /sys)
          --receive-buffer <bytes>
                                  Netlink receive buffer to request, in bytes, at least 4096.
                                  (default: 8388608)
          --version               Show the version.
          -h, --help              Show help information.
        """

    /// What the command line asks for.
    enum Request: Equatable {
        /// Run with these options.
        case run(DaemonOptions)
        /// Print the help.
        case help
        /// Print the version.
        case version
        /// The command line is wrong; the message says how.
        case invalid(String)
    }

    /// Parses the arguments (without the program name). Accepts `--name value` and `--name=value`.
    static func parse(_ arguments: [String]) -> Request {
        var options = DaemonOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "-h" || argument == "--help" { return .help }
            if argument == "--version" { return .version }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard ["--log-level", "--config", "--sysfs-root", "--receive-buffer"].contains(name) else {
                return .invalid("Unknown option '\(argument)'")
            }
            guard let given = value ?? remaining.popFirst() else { return .invalid("Missing value for '\(name) <value>'") }
            switch name {
            case "--log-level":
                guard let level = LogLevel(name: given) else {
                    return .invalid("Unknown log level '\(given)'; use error, warning, notice, info or debug.")
                }
                options.logLevel = level
            case "--config":
                options.configurationFile = given
            case "--sysfs-root":
                options.sysfsRoot = given
            default:
                guard let bytes = Int32(given), bytes >= 4096 else {
                    return .invalid("--receive-buffer must be a number of bytes, at least 4096; got '\(given)'")
                }
                options.receiveBufferBytes = bytes
            }
        }
        return .run(options)
    }
}
