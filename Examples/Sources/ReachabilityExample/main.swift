// The README's example: a status handler and the change notification, then Dispatch's main loop.
// Run it on a machine with reachabilityd (or with DBUS_SYSTEM_BUS_ADDRESS pointing at a bus with
// the daemon) and unplug a cable.
import Foundation
import ReachabilityNotifications  // ReachabilityClient and the notifications (Foundation)

let manager = ReachabilityManager.shared          // or ReachabilityManager(domain: "example.org")
manager.setStatusChangeHandler(queue: .main) { status in
    print("Network:", status.localizedDescription)  // "Reachable via WiFi", or 通过 Wi-Fi 连接 in zh_CN
}
let observer = NotificationCenter.default.addObserver(
    forName: ReachabilityManager.didChangeNotification, object: manager, queue: nil
) { @Sendable note in
    let status = note.userInfo?[ReachabilityManager.statusUserInfoKey] as? ReachabilityStatus
    print("Changed to", status?.rawValue ?? "?", "via", manager.interfaceName ?? "-")
}
manager.startMonitoring()
withExtendedLifetime(observer) { dispatchMain() }
