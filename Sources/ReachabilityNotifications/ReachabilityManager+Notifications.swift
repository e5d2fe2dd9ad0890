import Foundation
@_exported import ReachabilityClient

// The AFNetworking-style notifications, kept out of ReachabilityClient so that a service using
// only handlers and streams links no Foundation (and no ICU). Import this module instead of
// ReachabilityClient to get both.

extension ReachabilityManager {
    /// Posted (on a private queue, with the manager as object) each time the status of a
    /// monitoring manager changes. The new status is under ``statusUserInfoKey``.
    ///
    /// Posting starts the first time this name (or ``connectivityDidChangeNotification``) is
    /// used, which observing it does; changes published before are not posted.
    public static var didChangeNotification: Notification.Name {
        NotificationPosting.start()
        return NotificationPosting.statusName
    }

    /// The key of the new ``ReachabilityStatus`` in ``didChangeNotification``'s `userInfo`.
    public static let statusUserInfoKey = "org.reachabilityd.ReachabilityManager.status"

    /// Posted (on a private queue, with the manager as object) each time the connectivity of a
    /// monitoring manager changes. The new ``Connectivity`` is under ``connectivityUserInfoKey``,
    /// the captive portal's URL (a `String`, when one is known) under ``captivePortalUserInfoKey``.
    public static var connectivityDidChangeNotification: Notification.Name {
        NotificationPosting.start()
        return NotificationPosting.connectivityName
    }

    /// The key of the new ``Connectivity`` in ``connectivityDidChangeNotification``'s `userInfo`.
    public static let connectivityUserInfoKey = "org.reachabilityd.ReachabilityManager.connectivity"

    /// The key of the captive portal's URL in ``connectivityDidChangeNotification``'s `userInfo`.
    public static let captivePortalUserInfoKey = "org.reachabilityd.ReachabilityManager.captivePortal"
}

/// Posts the notifications from every manager's changes, once started (process-wide).
private enum NotificationPosting {
    static let statusName = Notification.Name("org.reachabilityd.ReachabilityManager.didChange")
    static let connectivityName = Notification.Name("org.reachabilityd.ReachabilityManager.connectivityDidChange")

    /// Registers the observer, once (a static let's initializer runs once, thread-safely).
    private static let registration: Void = ReachabilityManager.observeAllChanges { manager, previous, next in
        if previous.status != next.status {
            NotificationCenter.default.post(
                name: statusName, object: manager, userInfo: [ReachabilityManager.statusUserInfoKey: next.status]
            )
        }
        if previous.connectivity != next.connectivity || previous.captivePortal != next.captivePortal {
            var userInfo: [String: any Sendable] = [ReachabilityManager.connectivityUserInfoKey: next.connectivity]
            if !next.captivePortal.isEmpty { userInfo[ReachabilityManager.captivePortalUserInfoKey] = next.captivePortal }
            NotificationCenter.default.post(name: connectivityName, object: manager, userInfo: userInfo)
        }
    }

    static func start() {
        registration
    }
}
