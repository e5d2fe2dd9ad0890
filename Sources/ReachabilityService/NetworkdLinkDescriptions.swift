#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// What systemd-networkd records about each link that the daemon uses, from
/// `org.freedesktop.network1.Link.Describe()`'s JSON: the captive-portal API that DHCPv4 (option
/// 114, RFC 8910) gave it (`CaptivePortal`, systemd ≥ 254), and the NAT64 prefixes of the router
/// advertisements networkd handles itself (`NDisc.PREF64`, `UsePREF64=yes`, systemd ≥ 255; the
/// kernel then hands them to nobody else). Each link is asked at start-up, when networkd signals a
/// change of that link's properties (a lease's or an advertisement's addresses change its address
/// state), every link again when networkd (re)starts, a link on which routes that router
/// advertisements installed change (``routerAdvertisementRoutesChanged(on:)``: networkd installs
/// an advertisement's routes again at each one, while a PREF64 option that appears, changes or
/// goes changes no property it signals), and a link whose record holds a NAT64 prefix again
/// halfway to the end of its lifetime. One question per link is out at a time: what asks
/// meanwhile asks once more when its answer comes. Without networkd, or with one too old to record these, nothing happens: the
/// calls never start it (`startsService: false`) and their errors are only debug-logged.
/// Confined to the daemon's queue.
public final class NetworkdLinkDescriptions {
    /// What networkd records about one link.
    public struct Record: Sendable, Equatable {
        /// The captive-portal API's URI; nil: none.
        public var captivePortalAPI: String?
        /// The NAT64 prefixes it recorded from router advertisements.
        package var nat64Prefixes: [NetworkdPREF64]
        /// The Wi-Fi network's SSID (`SSID`, for a wireless link it knows associated); nil: none.
        public var ssid: String? = nil
    }

    /// networkd's bus name.
    static let busName = "org.freedesktop.network1"
    /// The path under which networkd exports its links.
    private static let linkPathNamespace = "/org/freedesktop/network1/link"

    private let connection: BusConnection
    private let linkIndices: () -> [InterfaceIndex]
    private let record: (Record, InterfaceIndex) -> Void
    private var linkChanges: BusSlot?
    private var appearance: NameOwnerWatch?
    /// Per link whose record holds a NAT64 prefix, the timer that asks about it again.
    private var refreshes: [InterfaceIndex: DispatchSourceTimer] = [:]
    /// The links asked about whose answer has not come yet.
    private var asking: Set<InterfaceIndex> = []
    /// The links to ask about again once their answer comes.
    private var askingAgain: Set<InterfaceIndex> = []

    /// - Parameters:
    ///   - connection: the daemon's system bus connection (its queue is this object's).
    ///   - linkIndices: the links to ask about when networkd (re)starts.
    ///   - record: takes a link's record on the queue.
    public init(connection: BusConnection, linkIndices: @escaping () -> [InterfaceIndex], record: @escaping (Record, InterfaceIndex) -> Void) {
        self.connection = connection
        self.linkIndices = linkIndices
        self.record = record
    }

    deinit {
        for timer in refreshes.values { timer.cancel() }
    }

    /// Subscribes to networkd's link and name changes, and asks about every link if it runs.
    public func start() throws(SystemError) {
        linkChanges = try connection.addMatch(
            BusSignalMatch(sender: Self.busName, pathNamespace: Self.linkPathNamespace, interface: BusDriver.propertiesInterface, member: "PropertiesChanged")
        ) { [weak self] message in
            guard let self, appearance?.isFromOwner(message) == true, let index = message.path.flatMap(Self.linkIndex(ofPath:)) else { return }
            ask(about: index)
        }
        appearance = try NameOwnerWatch.appearances(of: Self.busName, description: "systemd-networkd", on: connection) { [weak self] in
            self?.askAboutEveryLink()
        }
    }

    /// Routes that router advertisements installed on `links` were added, replaced or deleted:
    /// while networkd runs, asks about them again.
    public func routerAdvertisementRoutesChanged(on links: Set<InterfaceIndex>) {
        guard appearance?.owner != nil else { return }
        for index in links { ask(about: index) }
    }

    private func askAboutEveryLink() {
        for index in linkIndices() { ask(about: index) }
    }

    /// Asks networkd to describe link `index` and records what it says; while a question about
    /// it is out, asks once more after its answer.
    private func ask(about index: InterfaceIndex) {
        guard asking.insert(index).inserted else {
            askingAgain.insert(index)
            return
        }
        do {
            try connection.call(
                destination: Self.busName, path: Self.path(ofLink: index), interface: "org.freedesktop.network1.Link", member: "Describe",
                returning: String.self, timeoutMicroseconds: 5_000_000, startsService: false
            ) { [weak self] reply in
                defer { self?.answered(index) }
                let json: String
                switch reply {
                case .success(let text): json = text
                case .failure(let error): return Log.debug("systemd-networkd did not describe link \(index.rawValue): \(error)")
                }
                guard case .object(let link)? = JSONValue.parse(Array(json.utf8)) else {
                    Log.debug("systemd-networkd's description of link \(index.rawValue) is not a JSON object")
                    return
                }
                var uri: String?
                if case .string(let text)? = link["CaptivePortal"] { uri = text }
                let prefixes = NetworkdPREF64.records(inLinkDescription: link)
                self?.scheduleRefresh(of: index, lifetimeEnds: prefixes.compactMap(\.lifetimeEndSeconds))
                var ssid: String?
                if case .string(let text)? = link["SSID"], !text.isEmpty { ssid = text }
                self?.record(Record(captivePortalAPI: uri, nat64Prefixes: prefixes, ssid: ssid), index)
            }
        } catch {
            asking.remove(index)
            Log.debug("\(error)")
        }
    }

    /// The answer about link `index` came: asks again if something asked meanwhile.
    private func answered(_ index: InterfaceIndex) {
        asking.remove(index)
        if askingAgain.remove(index) != nil { ask(about: index) }
    }

    /// Asks about link `index` again halfway to the first of `lifetimeEnds` (seconds of
    /// `CLOCK_BOOTTIME`; at least a second from now), or stops asking when there is none.
    private func scheduleRefresh(of index: InterfaceIndex, lifetimeEnds: [Double]) {
        guard let end = lifetimeEnds.min() else {
            refreshes.removeValue(forKey: index)?.cancel()
            return
        }
        let timer = refreshes[index] ?? {
            let timer = DispatchSource.makeTimerSource(queue: connection.queue)
            timer.setEventHandler { [weak self] in self?.ask(about: index) }
            timer.resume()
            refreshes[index] = timer
            return timer
        }()
        let delay = max(1, (end - clockSeconds(CLOCK_BOOTTIME)) / 2)
        timer.schedule(wallDeadline: .now() + .milliseconds(Int((delay * 1000).rounded(.up))), leeway: .milliseconds(500))
    }

    /// networkd's object path for link `index` (``SystemdLinkPath``): "2" is "_32".
    static func path(ofLink index: InterfaceIndex) -> String {
        SystemdLinkPath.path(ofLink: index, under: linkPathNamespace)
    }

    /// The link index a networkd link object path names; nil for another path.
    static func linkIndex(ofPath path: String) -> InterfaceIndex? {
        SystemdLinkPath.linkIndex(ofPath: path, under: linkPathNamespace)
    }
}
