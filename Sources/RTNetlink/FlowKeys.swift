#if canImport(Glibc)
import Glibc
#endif

/// The transport keys of a flow as the kernel's policy rules see them (`ip rule … ipproto P
/// dport N`): a route lookup that carries them (`ip route get … ipproto tcp dport 443`) matches
/// the rules a connection with those keys matches.
///
/// The source port is left out: an application's is an ephemeral port nobody can predict, and
/// the uid and mark are the asker's own (the kernel fills in the caller's uid; the mark is 0).
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

    /// A flow of `transportProtocol` to `destinationPort`.
    public init(_ transportProtocol: TransportProtocol, destinationPort: UInt16) {
        self.transportProtocol = transportProtocol
        self.destinationPort = destinationPort
    }

    /// The keys as `ip route get` takes them: `ipproto tcp dport 443`.
    public var description: String { "ipproto \(transportProtocol.name) dport \(destinationPort)" }
}
