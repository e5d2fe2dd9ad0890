import Foundation
import ReachabilityCore

/// An `org.freedesktop.DBus.Properties.PropertiesChanged` signal from the daemon's object.
package struct PropertiesChangedSignal: Equatable, CustomStringConvertible {
    /// The interface whose properties changed.
    package var interface: String
    /// The changed properties with their new values.
    package var changed: [String: BusctlValue]
    /// The properties invalidated without a value.
    package var invalidated: [String]

    /// Every property the signal names, changed or invalidated.
    package var propertyNames: Set<String> { Set(changed.keys).union(invalidated) }

    package var description: String {
        "PropertiesChanged(\(interface), {\(changed.keys.sorted().map { "\($0): \(changed[$0]!)" }.joined(separator: ", "))}, \(invalidated))"
    }
}

/// Records the signals sent on the daemon's object path, through a background
/// `busctl monitor --json=short --match "type='signal',path='/org/reachabilityd/Reachability1'"`.
///
/// The match is on the path rather than on `sender='org.reachabilityd.Reachability1'` so that
/// the recorder's own marker signals, emitted by another connection, pass it too: the recorder
/// counts as subscribed once it has seen a marker. Recording stops at `stop()` or `deinit`.
package final class SignalRecorder {
    /// The interface of the marker signals (never the daemon's).
    package static let markerInterface = "org.reachabilityd.IntegrationTest"

    private let busctl: Busctl
    private let process: ChildProcess
    private let outputPath: String
    private let errorPath: String
    private var consumedBytes: UInt64 = 0
    private var recordedStatusChanges: [String] = []
    private var recordedConnectivityChanges: [String] = []
    private var recordedPropertiesChanges: [PropertiesChangedSignal] = []
    private var recordedRoutesChanged = 0
    private var markers: [String] = []
    private var unreadableLines: [String] = []

    /// Starts the monitor and waits until it is subscribed.
    ///
    /// - Parameters:
    ///   - busctl: the bus to monitor.
    ///   - directory: where the monitor's output goes.
    /// - Throws: `HarnessError` when the monitor does not start or never sees a marker.
    package init(busctl: Busctl, directory: TemporaryDirectory) throws {
        self.busctl = busctl
        outputPath = directory.file("monitor.jsonl")
        errorPath = directory.file("monitor.err")
        process = try ChildProcess(
            "busctl",
            [
                "--address=\(busctl.address)", "monitor", "--json=short",
                "--match", "type='signal',path='\(BusContract.objectPath)'",
            ],
            standardOutput: outputPath, standardError: errorPath
        )
        try waitUntilSubscribed()
    }

    deinit {
        stop()
    }

    /// The arguments of every `StatusChanged` signal so far, in order.
    package var statusChanges: [String] {
        refresh()
        return recordedStatusChanges
    }

    /// The arguments of every `ConnectivityChanged` signal so far, in order.
    package var connectivityChanges: [String] {
        refresh()
        return recordedConnectivityChanges
    }

    /// Every `PropertiesChanged` signal from the daemon's object so far, in order.
    package var propertiesChanges: [PropertiesChangedSignal] {
        refresh()
        return recordedPropertiesChanges
    }

    /// How many `RoutesChanged` signals arrived so far.
    package var routesChangedCount: Int {
        refresh()
        return recordedRoutesChanged
    }

    /// Waits until at least `count` `RoutesChanged` signals have arrived (counted since the
    /// recorder started) and returns how many did.
    @discardableResult
    package func waitForRoutesChanged(count: Int, timeout: Duration = Poll.defaultTimeout) throws -> Int {
        try Poll.until("\(count) RoutesChanged signal(s)", timeout: timeout, observe: { () -> Int in
            _ = try checkedStatusChanges()
            return recordedRoutesChanged
        }) { $0 >= count }
    }

    /// How many `PropertiesChanged` signals arrived so far.
    package var propertiesChangedCount: Int {
        propertiesChanges.count
    }

    /// Waits until at least `count` `StatusChanged` signals have arrived.
    ///
    /// - Parameters:
    ///   - count: how many signals, counted since the recorder started.
    ///   - timeout: the deadline.
    /// - Returns: the arguments of all `StatusChanged` signals so far.
    /// - Throws: `HarnessError` with what arrived, on timeout.
    @discardableResult
    package func waitForStatusChanged(count: Int, timeout: Duration = Poll.defaultTimeout) throws -> [String] {
        try Poll.until("\(count) StatusChanged signal(s)", timeout: timeout, observe: { try self.checkedStatusChanges() }) {
            $0.count >= count
        }
    }

    /// Waits until at least `count` `ConnectivityChanged` signals have arrived: a signal reaches
    /// the monitor on its own path, maybe after a read of the properties that already shows its value.
    ///
    /// - Parameters:
    ///   - count: how many signals, counted since the recorder started.
    ///   - timeout: the deadline.
    /// - Returns: the arguments of all `ConnectivityChanged` signals so far.
    /// - Throws: `HarnessError` with what arrived, on timeout.
    @discardableResult
    package func waitForConnectivityChanged(count: Int, timeout: Duration = Poll.defaultTimeout) throws -> [String] {
        try Poll.until("\(count) ConnectivityChanged signal(s)", timeout: timeout, observe: { () -> [String] in
            _ = try checkedStatusChanges()
            return recordedConnectivityChanges
        }) { $0.count >= count }
    }

    /// Waits until the `PropertiesChanged` signals so far satisfy `condition`.
    ///
    /// - Parameters:
    ///   - what: what is awaited, for the failure message.
    ///   - timeout: the deadline.
    ///   - condition: a predicate over all signals so far.
    /// - Returns: all signals so far.
    /// - Throws: `HarnessError` with what arrived, on timeout.
    @discardableResult
    package func waitForPropertiesChanged(
        _ what: @autoclosure () -> String,
        timeout: Duration = Poll.defaultTimeout,
        where condition: ([PropertiesChangedSignal]) -> Bool
    ) throws -> [PropertiesChangedSignal] {
        try Poll.until(what(), timeout: timeout, observe: { () -> [PropertiesChangedSignal] in
            _ = try checkedStatusChanges()
            return recordedPropertiesChanges
        }, accept: condition)
    }

    /// Stops the monitor; harmless when repeated.
    package func stop() {
        process.terminate()
    }

    /// What the monitor wrote to stderr, and any line it printed that could not be decoded.
    package var diagnostics: String {
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return errors + unreadableLines.map { "undecodable: \($0)\n" }.joined()
    }

    /// `statusChanges`, or an error when the monitor has died.
    private func checkedStatusChanges() throws -> [String] {
        refresh()
        if let ended = process.poll() {
            throw HarnessError("busctl monitor exited (\(ended)): \(diagnostics)")
        }
        return recordedStatusChanges
    }

    /// Emits marker signals until the monitor has printed one.
    private func waitUntilSubscribed() throws {
        var sent = 0
        try Poll.until("busctl monitor to see a marker signal") {
            refresh()
            if !markers.isEmpty { return true }
            if let ended = process.poll() {
                throw HarnessError("busctl monitor exited (\(ended)): \(diagnostics)")
            }
            sent += 1
            try busctl.emit(
                path: BusContract.objectPath, interface: Self.markerInterface, member: "Marker",
                argument: "subscribed-\(sent)"
            )
            return false
        }
    }

    /// Decodes the complete lines the monitor has written since the last call.
    private func refresh() {
        guard let handle = FileHandle(forReadingAtPath: outputPath) else { return }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: consumedBytes)) != nil,
              let data = try? handle.readToEnd(),
              let lastNewline = data.lastIndex(of: UInt8(ascii: "\n"))
        else { return }
        let complete = data[data.startIndex...lastNewline]
        consumedBytes += UInt64(complete.count)
        for line in complete.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard let message = try? JSONDecoder().decode(MonitoredMessage.self, from: Data(line)) else {
                unreadableLines.append(String(decoding: line, as: UTF8.self))
                continue
            }
            record(message)
        }
    }

    /// Files one monitored message under what it is.
    private func record(_ message: MonitoredMessage) {
        guard message.type == "signal", message.path == BusContract.objectPath else { return }
        switch (message.interface, message.member, message.payload) {
        case (BusContract.interface, BusContract.statusChangedSignal, .strings(let arguments)?):
            recordedStatusChanges.append(arguments.first ?? "")
        case (BusContract.interface, BusContract.connectivityChangedSignal, .strings(let arguments)?):
            recordedConnectivityChanges.append(arguments.first ?? "")
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged", .propertiesChanged(let signal)?):
            recordedPropertiesChanges.append(signal)
        case (BusContract.interface, BusContract.routesChangedSignal, _):
            recordedRoutesChanged += 1
        case (Self.markerInterface, _, .strings(let arguments)?):
            markers.append(arguments.first ?? "")
        default:
            break
        }
    }
}

/// One line of `busctl monitor --json=short`: a message's header fields and payload.
private struct MonitoredMessage: Decodable {
    /// "signal", "method_call", "method_return" or "error".
    package var type: String
    package var path: String?
    package var interface: String?
    package var member: String?
    package var payload: Payload?

    /// The payloads the recorder understands.
    package enum Payload: Decodable {
        /// Signature made only of strings, e.g. `s`.
        case strings([String])
        /// Signature `sa{sv}as`.
        case propertiesChanged(PropertiesChangedSignal)
        /// Anything else.
        case other(String)

        private enum CodingKeys: String, CodingKey {
            case type, data
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let signature = try container.decode(String.self, forKey: .type)
            switch signature {
            case _ where !signature.isEmpty && signature.allSatisfy({ $0 == "s" }):
                self = .strings(try container.decode([String].self, forKey: .data))
            case "sa{sv}as":
                var data = try container.nestedUnkeyedContainer(forKey: .data)
                self = .propertiesChanged(PropertiesChangedSignal(
                    interface: try data.decode(String.self),
                    changed: try data.decode([String: BusctlValue].self),
                    invalidated: try data.decode([String].self)
                ))
            default:
                self = .other(signature)
            }
        }
    }
}
