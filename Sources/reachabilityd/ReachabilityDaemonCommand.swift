#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import ReachabilityEngine
import ReachabilityService
import SystemSupport

/// `reachabilityd`: the command line of the daemon (the grammar reachabilityctl uses too:
/// SystemSupport's ``CommandSpec``).
@main
enum ReachabilityDaemonCommand {
    static func main() {
        // The daemon's own connectivity-check helper (not an option: never listed, never typed).
        if CommandLine.arguments.count == 2 && CommandLine.arguments[1] == CheckHelperProcess.modeArgument { CheckHelperProcess.run() }
        let options: DaemonOptions
        switch DaemonOptions.parse(Array(CommandLine.arguments.dropFirst())) {
        case .run(let parsed):
            options = parsed
        case .help:
            print(DaemonOptions.help)
            exit(EXIT_SUCCESS)
        case .version:
            print(ReleaseVersion.current)
            exit(EXIT_SUCCESS)
        case .invalid(let message):
            let text = "Error: \(message)\nUsage: \(DaemonOptions.spec.usage)\n  See 'reachabilityd --help' for more information.\n"
            // Not in a closure: the isolation check Swift 6 puts in a closure of the main actor's
            // `main` is all that linked the concurrency runtime into the daemon (its cost:
            // docs/benchmarks.md, "Private memory").
            _ = write(STDERR_FILENO, text, text.utf8.count)
            exit(64)  // EX_USAGE, as sysexits.h and reachabilityctl use
        }
        Log.maximumLevel = options.logLevel
        // Under systemd: structured entries (MESSAGE_ID and REACHABILITY_* fields) instead of lines.
        JournalLog.installIfStderrIsTheJournal()
        if options.removesMetricsTextfile {
            // The unit's ExecStopPost=: after any end, SIGKILL and crashes included.
            MetricsTextfile.remove(from: ConfigurationFiles(mainFile: options.configurationFile).load()?.metricsTextfileDirectory ?? "")
            exit(EXIT_SUCCESS)
        }
        Daemon(configurationFiles: ConfigurationFiles(mainFile: options.configurationFile),
               sysfsRoot: options.sysfsRoot, receiveBufferBytes: options.receiveBufferBytes, resolvConfPath: options.resolvConfPath,
               networkdLeaseDirectory: options.networkdLeaseDirectory).run()
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
    /// `--resolv-conf`: the resolver configuration whose nameservers `DNS` judges.
    var resolvConfPath = "/etc/resolv.conf"
    /// `--remove-metrics-textfile`: remove the metrics file and exit instead of running.
    var removesMetricsTextfile = false
    /// `--networkd-leases`: where systemd-networkd saves its DHCPv4 leases (ANDROID_METERED).
    var networkdLeaseDirectory = NetworkdLeases.defaultDirectory

    /// The grammar, its usage line and help.
    static let spec = CommandSpec(
        program: "reachabilityd",
        name: "",
        abstract: "Publish the machine's network reachability on the D-Bus system bus.",
        discussion: """
            Reads rtnetlink link, address, route and rule events, asks the kernel which route it
            would use for a global IPv4 and IPv6 destination, and publishes the result as
            \(BusContract.busName) on the system bus ($DBUS_SYSTEM_BUS_ADDRESS when set).
            Logs go to the journal (or stderr, with journald priority prefixes when it is not a
            terminal). SIGHUP reloads the configuration; SIGTERM and SIGINT stop the daemon.
            """,
        options: [
            .value("log-level", "level", "Most verbose level logged: error, warning, notice, info or debug.", default: "info"),
            .value("config", "path", "The configuration file; drop-ins are read from <path>.d/*.conf. Reloaded on SIGHUP.",
                   default: ConfigurationFiles.defaultMainFile),
            .value("sysfs-root", "path", "Where sysfs is mounted; tests point this at a fake tree.", default: "/sys"),
            .value("receive-buffer", "bytes", "Netlink receive buffer to request, in bytes, from 4096 to 2147483647.", default: "8388608"),
            .value("resolv-conf", "path", "The resolver configuration applications read, whose nameservers DNS judges (followed live).",
                   default: "/etc/resolv.conf"),
            .flag("remove-metrics-textfile", "Remove reachabilityd.prom from [Metrics] TextfileDirectory= and exit (the unit's ExecStopPost=)."),
            .value("networkd-leases", "path", "Where systemd-networkd saves its DHCPv4 leases, read for ANDROID_METERED (followed live).",
                   default: NetworkdLeases.defaultDirectory),
            .flag("version", "Show the version."),
        ]
    )

    /// The text of `--help`.
    static var help: String { spec.help }

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
        do throws(UsageError) {
            guard let parsed = try spec.parse(arguments) else { return .help }
            if parsed.flag("version") { return .version }
            var options = DaemonOptions()
            if let text = parsed.values["log-level"] {
                guard let level = LogLevel(name: text) else {
                    throw UsageError(message: "Unknown log level '\(text)'; use error, warning, notice, info or debug.")
                }
                options.logLevel = level
            }
            if let path = parsed.values["config"] { options.configurationFile = path }
            options.removesMetricsTextfile = parsed.flag("remove-metrics-textfile")
            if let path = parsed.values["sysfs-root"] { options.sysfsRoot = path }
            if let path = parsed.values["resolv-conf"] { options.resolvConfPath = path }
            if let path = parsed.values["networkd-leases"] { options.networkdLeaseDirectory = path }
            if let bytes = try parsed.integer("receive-buffer", in: 4096...Int64(Int32.max)) { options.receiveBufferBytes = Int32(bytes) }
            return .run(options)
        } catch {
            return .invalid(error.message)
        }
    }
}
