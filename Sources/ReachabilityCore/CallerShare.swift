/// Whose part of the daemon a bus caller draws on — call budget, turn in the queue, watched
/// destinations: all the connections of one unprivileged user together (`uid 1000`), so that
/// opening more connections buys no more of the daemon; root's connections (system services)
/// each their own (their unique name).
public struct CallerShare: Sendable, Hashable {
    /// "uid 1000", or the connection's unique name (":1.42"; "" for an in-process caller).
    public let name: String
    /// Whether it is an unprivileged user's share (every connection of that user).
    public let isUser: Bool
    /// The user the bus reports for the caller, whose routes its questions are asked with
    /// (`CheckAddress`: policy rules' `uidrange`); nil when the bus could not tell, or in-process:
    /// the asking process's own.
    public let uid: UInt32?

    /// The share of one connection of its own: root's (`uid` 0), or one whose user the bus
    /// cannot tell (nil).
    public init(connection uniqueName: String, uid: UInt32? = nil) {
        name = uniqueName
        isUser = false
        self.uid = uid
    }

    /// The share of every connection of the unprivileged user `uid`.
    public init(user uid: UInt32) {
        name = "uid \(uid)"
        isUser = true
        self.uid = uid
    }

    /// The share of the connection `uniqueName`, which the bus says runs as `busUser` (nil: the
    /// bus could not tell): an unprivileged user's, root's own, or its own without a uid.
    public init(connection uniqueName: String, busUser: UInt32?) {
        switch busUser {
        case .some(0): self.init(connection: uniqueName, uid: 0)
        case .some(let uid): self.init(user: uid)
        case .none: self.init(connection: uniqueName)
        }
    }
}
