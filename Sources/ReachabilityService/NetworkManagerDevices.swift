import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// What NetworkManager says of each link it manages: the device's own `Metered` (its rule:
/// the connection's setting, else its guess from the device type and DHCP's ANDROID_METERED;
/// ``MeteredRule``), and the captive-portal API that DHCPv4 (option 114, RFC 8910) gave it: an entry of the `Options` of the device's `org.freedesktop.NetworkManager.DHCP4Config`,
/// named by the DHCP client that took the lease. NetworkManager's internal client (up to 1.52
/// at least) drops the option; dhclient (`dhcp=dhclient`, `also request default-url;`) names it
/// `default_url`, dhcpcd (`dhcp=dhcpcd`, `option captive_portal_uri`) `captive_portal_uri`.
///
/// Every device is asked at start-up and whenever NetworkManager (re)starts; a device again
/// when its `Dhcp4Config`, `IpInterface` or `Metered` changes, or its DHCP4Config's options change (a new
/// lease); signals are believed only from the owner of NetworkManager's name. Without
/// NetworkManager nothing happens: the calls never start it and their errors
/// are only debug-logged. Confined to the daemon's queue.
public final class NetworkManagerDevices {
    /// NetworkManager's bus name.
    static let busName = "org.freedesktop.NetworkManager"
    /// The keys of DHCPv4 option 114 in a DHCP4Config's `Options`: dhclient's name, dhcpcd's.
    static let captivePortalOptions = ["default_url", "captive_portal_uri"]
    private static let deviceInterface = "org.freedesktop.NetworkManager.Device"
    private static let dhcp4ConfigInterface = "org.freedesktop.NetworkManager.DHCP4Config"
    private let connection: BusConnection
    private let linkIndex: (String) -> InterfaceIndex?
    private let record: (String?, InterfaceIndex) -> Void
    private let recordMetered: (NetworkManagerMetered, InterfaceIndex) -> Void
    private var changes: [BusSlot] = []
    private var appearance: NameOwnerWatch?
    /// The device each DHCP4Config object belongs to, as last asked.
    private var deviceOfConfiguration: [String: String] = [:]

    /// - Parameters:
    ///   - connection: the daemon's system bus connection (its queue is this object's).
    ///   - linkIndex: the index of the link with a name, if the daemon knows it.
    ///   - recordMetered: takes a link's `Metered` on the queue.
    ///   - record: takes a link's URI (nil: none) on the queue.
    public init(
        connection: BusConnection, linkIndex: @escaping (String) -> InterfaceIndex?,
        recordMetered: @escaping (NetworkManagerMetered, InterfaceIndex) -> Void = { _, _ in }, record: @escaping (String?, InterfaceIndex) -> Void
    ) {
        self.connection = connection
        self.linkIndex = linkIndex
        self.recordMetered = recordMetered
        self.record = record
    }

    /// Subscribes to NetworkManager's device, DHCP and name changes, and asks about every
    /// device if it runs.
    public func start() throws(SystemError) {
        changes.append(try connection.addMatch(.propertiesChanged(of: Self.deviceInterface, sender: Self.busName)) { [weak self] message in
            guard let self, appearance?.isFromOwner(message) == true, let device = message.path, (try? message.readString()) != nil,
                  let changed = try? message.readPropertyDictionary(),
                  changed["Dhcp4Config"] != nil || changed["IpInterface"] != nil || changed["Metered"] != nil
            else { return }
            ask(aboutDevice: device)
        })
        changes.append(try connection.addMatch(.propertiesChanged(of: Self.dhcp4ConfigInterface, sender: Self.busName)) { [weak self] message in
            guard let self, appearance?.isFromOwner(message) == true, let device = message.path.flatMap({ self.deviceOfConfiguration[$0] }) else { return }
            ask(aboutDevice: device)
        })
        appearance = try NameOwnerWatch.appearances(of: Self.busName, description: "NetworkManager", on: connection) { [weak self] in
            self?.askAboutEveryDevice()
        }
    }

    private func askAboutEveryDevice() {
        call(path: "/org/freedesktop/NetworkManager", interface: Self.busName, member: "GetDevices", returning: [String].self) { [weak self] devices in
            for device in devices { self?.ask(aboutDevice: device) }
        }
    }

    /// Asks which link a device is, its `Metered` and which DHCP4Config it has, then that configuration's options.
    private func ask(aboutDevice device: String) {
        call(
            path: device, interface: BusDriver.propertiesInterface, member: "GetAll", arguments: [Self.deviceInterface],
            returning: [String: BusValue].self
        ) { [weak self] properties in
            guard let self, case .string(let name)? = properties["IpInterface"], let index = linkIndex(name) else { return }
            if case .unsigned32(let metered)? = properties["Metered"] { recordMetered(NetworkManagerMetered(rawValue: metered) ?? .unknown, index) }
            guard case .string(let configuration)? = properties["Dhcp4Config"] else { return }
            deviceOfConfiguration = deviceOfConfiguration.filter { $0.value != device }
            guard configuration != "/" else { return record(nil, index) }  // no DHCPv4 lease
            deviceOfConfiguration[configuration] = device
            askForOptions(of: configuration, link: index)
        }
    }

    private func askForOptions(of configuration: String, link index: InterfaceIndex) {
        call(
            path: configuration, interface: BusDriver.propertiesInterface, member: "Get", arguments: [Self.dhcp4ConfigInterface, "Options"],
            returning: DHCP4Options.self
        ) { [weak self] options in
            self?.record(Self.captivePortalURI(in: options.values), index)
        }
    }

    /// The captive-portal API URI in a DHCP4Config's `Options`: dhclient's key, else dhcpcd's.
    static func captivePortalURI(in options: [String: BusValue]) -> String? {
        for key in captivePortalOptions {
            if case .string(let text)? = options[key] { return text }
        }
        return nil
    }

    /// Calls NetworkManager without starting it; an error reply, or one that is not a `Reply`,
    /// is only debug-logged.
    private func call<Reply: BusReplyValue>(
        path: String, interface: String, member: String, arguments: [String] = [], returning type: Reply.Type,
        reply: @escaping (Reply) -> Void
    ) {
        do {
            try connection.call(
                destination: Self.busName, path: path, interface: interface, member: member, arguments: arguments, returning: type,
                timeoutMicroseconds: 5_000_000, startsService: false
            ) { result in
                switch result {
                case .success(let value): reply(value)
                case .failure(let error): Log.debug("NetworkManager did not answer \(member) on \(path): \(error)")
                }
            }
        } catch {
            Log.debug("\(error)")
        }
    }

    /// The `Options` of a DHCP4Config as `Get` returns them: a variant holding `a{sv}`.
    private struct DHCP4Options: BusReplyValue {
        let values: [String: BusValue]

        init(reading reply: BusMessage) throws(SystemError) {
            try reply.enterVariant(holding: "a{sv}")
            values = try reply.readPropertyDictionary()
        }
    }
}
