import Foundation
import XCTest

/// Where the suite finds the repository's files and the daemon binary.
package enum TestPaths {
    /// The repository root, three levels above this file (`Tests/TestSupport/TestPaths.swift`).
    package static let repositoryRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .path

    /// The repository's `dbus/` directory.
    package static var dbusDirectory: String { "\(repositoryRoot)/dbus" }

    /// The private system-bus configuration template shared with `make run`.
    package static var privateBusTemplate: String { "\(repositoryRoot)/scripts/private-system-bus.conf.in" }

    /// Debian's node_exporter, unpacked from its package into the build directory by `make deps`
    /// (`scripts/install-deps.sh`): installed, the package would start a service on port 9100.
    package static var nodeExporter: String {
        "\(repositoryRoot)/.build/test-tools/prometheus-node-exporter/usr/bin/prometheus-node-exporter"
    }

    /// Debian's promtool, unpacked from the `prometheus` package into the build directory by
    /// `make deps`: installed, the package would start a Prometheus service on port 9090.
    package static var promtool: String { "\(repositoryRoot)/.build/test-tools/prometheus/usr/bin/promtool" }

    /// Debian's Prometheus server, from the same unpacked package as ``promtool``.
    package static var prometheus: String { "\(repositoryRoot)/.build/test-tools/prometheus/usr/bin/prometheus" }

    /// The alert rules the package installs (`prometheus/`), and their unit tests.
    package static var alertRules: String { "\(repositoryRoot)/prometheus/reachabilityd-alerts.yml" }

    /// Debian's tayga (a NAT64), unpacked from its package into the build directory by `make
    /// deps`: installed, the package would start it on the host.
    package static var tayga: String { "\(repositoryRoot)/.build/test-tools/tayga/usr/sbin/tayga" }

    /// Debian's xdg-desktop-portal, unpacked by `make deps` with the libraries it needs beyond
    /// GLib's (installed, the package enables a user unit in every session, and its dependencies
    /// run modprobe and update-initramfs).
    package static var xdgDesktopPortal: String {
        "\(repositoryRoot)/.build/test-tools/xdg-desktop-portal/usr/libexec/xdg-desktop-portal"
    }

    /// The `LD_LIBRARY_PATH` that finds ``xdgDesktopPortal``'s unpacked libraries: each package's
    /// `usr/lib/<triplet>`.
    package static var xdgDesktopPortalLibraryPath: String {
        ["libjson-glib-1.0-0", "libpipewire-0.3-0"].compactMap { package -> String? in
            let lib = "\(repositoryRoot)/.build/test-tools/\(package)/usr/lib"
            return (try? FileManager.default.contentsOfDirectory(atPath: lib))?.first.map { "\(lib)/\($0)" }
        }.joined(separator: ":")
    }

    /// GLib's installed tests (Debian's `libglib2.0-tests`).
    package static let glibInstalledTests = "/usr/libexec/installed-tests/glib"

    /// The connectivity tests' HTTP/HTTPS server (`testbed/servers/`), run in a router namespace.
    package static var connectivityServer: String { "\(repositoryRoot)/testbed/servers/connectivity-server.py" }

    /// The interface description, the source of truth of the D-Bus API.
    package static var interfaceDescription: String { "\(dbusDirectory)/org.reachabilityd.Reachability1.xml" }

    /// Every `dbus/*.conf` policy file, absolute paths, sorted.
    ///
    /// - Throws: when the directory cannot be listed.
    package static func policyFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dbusDirectory)
            .filter { $0.hasSuffix(".conf") }
            .sorted()
            .map { "\(dbusDirectory)/\($0)" }
    }

    /// The daemon under test: `$REACHABILITYD_PATH`, else `reachabilityd` beside the running test
    /// executable (`/proc/self/exe`; with SwiftPM on Linux both live in `.build/<triple>/debug/`).
    ///
    /// - Returns: the path of an executable file.
    /// - Throws: `HarnessError` when there is no executable at that path.
    package static func daemonBinary() throws -> String {
        try builtExecutable("reachabilityd", overriddenBy: "REACHABILITYD_PATH")
    }

    /// Skips the test when `path`, a tool `make deps` provides (installed or unpacked into
    /// `.build/test-tools`), is missing; on CI (`CI=true`) fails it instead.
    ///
    /// - Throws: `XCTSkip`, or `HarnessError` on CI.
    package static func requireTestTool(_ path: String) throws {
        guard !FileManager.default.isExecutableFile(atPath: path) else { return }
        if ProcessInfo.processInfo.environment["CI"] == "true" { throw HarnessError("\(path) is missing (make deps provides it)") }
        throw XCTSkip("\(path) is missing: make deps provides it")
    }

    /// `$variable`, else the product `name` beside the running test executable.
    ///
    /// - Throws: `HarnessError` when there is no executable at that path.
    package static func builtExecutable(_ name: String, overriddenBy variable: String) throws -> String {
        let path: String
        if let configured = ProcessInfo.processInfo.environment[variable], !configured.isEmpty {
            path = configured
        } else {
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("No \(name) at \(path): build the \(name) product or set \(variable)")
        }
        return path
    }
}
