#if canImport(Glibc)
import Glibc
#endif

/// The keys of a flow as the kernel's policy rules see them (`ip rule … ipproto P dport N
/// uidrange U-U`): a route lookup that carries them (`ip route get … ipproto tcp dport 443 uid
/// 1000`) matches the rules a connection with those keys matches.
///
/// The source port is left out: an application's is an ephemeral port nobody can predict. The
/// uid is the asker's own unless ``uid`` names another (a bus caller's); the mark is 0.
public struct FlowKeys: Sendable, Hashable {
    /// The transport protocols a flow can have here.
    public enum TransportProtocol: Sendable, Hashable {
        /// TCP (`IPPROTO_TCP`).
        case tcp
        /// UDP (`IPPROTO_UDP`).
        case udp

        /// The IP protocol number (`RTA_IP_PROTO`, one byte).
        var number: UInt8 {
            switch self {
            case .tcp: UInt8(IPPROTO_TCP)
            case .udp: UInt8(IPPROTO_UDP)
            }
        }

        /// The protocol's name as `ip rule` and `ip route get` spell it.
        public var name: String {
            switch self {
            case .tcp: "tcp"
            case .udp: "udp"
            }
        }
    }

    /// The transport protocol.
    public var transportProtocol: TransportProtocol
    /// The destination port.
    public var destinationPort: UInt16
    /// The user whose flow it is (`RTA_UID`), as policy rules' `uidrange` see it; nil: the
    /// asking process's own (the kernel fills it in, as it gives a socket its creator's).
    public var uid: UInt32?

    /// A flow of `transportProtocol` to `destinationPort`, of user `uid` (nil: the asker's own).
    public init(_ transportProtocol: TransportProtocol, destinationPort: UInt16, uid: UInt32? = nil) {
        self.transportProtocol = transportProtocol
        self.destinationPort = destinationPort
        self.uid = uid
    }

    /// The same flow, of user `uid` (nil: the asker's own).
    public func of(uid: UInt32?) -> FlowKeys {
        FlowKeys(transportProtocol, destinationPort: destinationPort, uid: uid)
    }

    /// The keys as `ip route get` takes them: `ipproto tcp dport 443` (then `uid 1000` when named).
    public var description: String { "ipproto \(transportProtocol.name) dport \(destinationPort)" + (uid.map { " uid \($0)" } ?? "") }
}
