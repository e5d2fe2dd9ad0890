import ReachabilityCore

/// The object paths systemd's daemons (networkd, resolved) give their links: the link index as
/// a path label under the daemon's link namespace, its leading digit escaped as `_3X` (its
/// ASCII code in hex, as `sd_bus_path_encode` does), so "2" is "_32" and "12" is "_312".
enum SystemdLinkPath {
    /// The path of link `index` under `namespace` (e.g. `/org/freedesktop/network1/link`).
    static func path(ofLink index: InterfaceIndex, under namespace: String) -> String {
        namespace + "/_3" + String(index.rawValue)
    }

    /// The link index a path under `namespace` names; nil for another path.
    static func linkIndex(ofPath path: String, under namespace: String) -> InterfaceIndex? {
        let prefix = namespace + "/_3"
        guard path.hasPrefix(prefix), let number = Int32(path.dropFirst(prefix.count)), number > 0 else { return nil }
        return InterfaceIndex(number)
    }
}
