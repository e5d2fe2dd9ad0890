import ArgumentParser
import ReachabilityCore
import SystemSupport

/// `reachabilityd`: the command line of the daemon.
@main
struct ReachabilityDaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachabilityd",
        abstract: "Publish the machine's network reachability on the D-Bus system bus.",
        discussion: """
            Reads rtnetlink link, address, route and rule events, asks the kernel which route it \
            would use for a global IPv4 and IPv6 destination, and publishes the result as \
            \(BusContract.busName) on the system bus ($DBUS_SYSTEM_BUS_ADDRESS when set). \
            Logs go to stderr with journald priority prefixes.
            """,
        version: DaemonVersion.string
    )

    @Option(name: .long, help: ArgumentHelp("Most verbose level logged: error, warning, notice, info or debug.", valueName: "level"))
    var logLevel: String = "info"

    @Option(name: .long, help: ArgumentHelp("The configuration file; drop-ins are read from <path>.d/*.conf. Reloaded on SIGHUP.", valueName: "path"))
    var config: String = "/etc/reachabilityd/reachabilityd.conf"

    @Option(name: .long, help: ArgumentHelp("Where sysfs is mounted; tests point this at a fake tree.", valueName: "path"))
    var sysfsRoot: String = "/sys"

    @Option(name: .long, help: ArgumentHelp("Netlink receive buffer to request, in bytes.", valueName: "bytes"))
    var receiveBuffer: Int32 = 8 * 1024 * 1024

    func validate() throws {
        guard LogLevel(name: logLevel) != nil else {
            throw ValidationError("Unknown log level '\(logLevel)'; use error, warning, notice, info or debug.")
        }
        guard receiveBuffer >= 4096 else { throw ValidationError("--receive-buffer must be at least 4096 bytes.") }
    }

    func run() throws {
        Log.maximumLevel = LogLevel(name: logLevel)!
        Daemon(configurationFiles: ConfigurationFiles(mainFile: config), sysfsRoot: sysfsRoot, receiveBufferBytes: receiveBuffer).run()
    }
}

/// The daemon's version, printed by `--version`.
enum DaemonVersion {
    static let string = "0.1.0"
}
