/// Whose part of the daemon a bus caller draws on — call budget, turn in the queue, watched
/// destinations: all the connections of one unprivileged user together (`uid 1000`), so that
/// opening more connections buys no more of the daemon; root's connections (system services)
/// each their own (their unique name).
public struct CallerShare: Sendable, Hashable {
    /// "uid 1000", or the connection's unique name (":1.42"; "" for an in-process caller).
    public let name: String
    /// Whether it is an unprivileged user's share (every connection of that user).
    public let isUser: Bool

    /// The share of one connection of its own: root's, or one whose user the bus cannot tell.
    public init(connection uniqueName: String) {
        name = uniqueName
        isUser = false
    }

    /// The share of every connection of the unprivileged user `uid`.
    public init(user uid: UInt32) {
        name = "uid \(uid)"
        isUser = true
    }
}
