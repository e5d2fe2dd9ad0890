import ReachabilityBus
import ReachabilityCore
import ReachabilityProperties

extension ReachabilitySnapshot {
    /// The snapshot the daemon publishes, from its properties as read with `GetAll` and updated
    /// by `PropertiesChanged` (names are `ReachabilityProperty` raw values), each written back
    /// by its entry in the property table (``ReachabilityProperty/definition``).
    ///
    /// A missing or mistyped property takes its `unknown` value. A `Status` string this client
    /// does not know (a newer daemon) reads as `.reachableViaOther` when `Reachable` is true,
    /// else `.unknown`.
    init(busProperties properties: [String: BusValue]) {
        self.init(
            status: .unknown, isIPv4Reachable: false, isIPv6Reachable: false, interface: "", transport: nil, isMetered: false, reason: "",
            ipv4Link: ("", nil), ipv6Link: ("", nil)
        )
        for property in ReachabilityProperty.allCases {
            guard let write = property.definition.write, let value = properties[property.rawValue] else { continue }
            write(&self, value)
        }
        // A Status this client does not know (a newer daemon) reads as reachable-via-other when Reachable.
        if properties[ReachabilityProperty.status.rawValue]?.string.flatMap(ReachabilityStatus.init(rawValue:)) == nil,
           properties[ReachabilityProperty.reachable.rawValue]?.boolean == true {
            status = .reachableViaOther
        }
        // An older daemon without the per-family links: each reachable family's is `Interface`'s.
        if properties[ReachabilityProperty.ipv4Interface.rawValue] == nil {
            (ipv4Interface, ipv4Transport) = isIPv4Reachable ? (interface, transport) : ("", nil)
        }
        if properties[ReachabilityProperty.ipv6Interface.rawValue] == nil {
            (ipv6Interface, ipv6Transport) = isIPv6Reachable ? (interface, transport) : ("", nil)
        }
    }

    /// The snapshot when no daemon owns the bus name.
    static let daemonAbsent = ReachabilitySnapshot(
        status: .unknown, isIPv4Reachable: false, isIPv6Reachable: false,
        interface: "", transport: nil, isMetered: false, reason: "reachabilityd is not running"
    )

    /// The snapshot when the daemon owns its bus name but does not answer; `why` says how the
    /// last read of its properties failed.
    static func daemonNotAnswering(_ why: String) -> ReachabilitySnapshot {
        ReachabilitySnapshot(
            status: .unknown, isIPv4Reachable: false, isIPv6Reachable: false,
            interface: "", transport: nil, isMetered: false, reason: "reachabilityd does not answer (\(why))"
        )
    }

    /// The snapshot when the bus cannot be reached.
    package static func busUnavailable(_ why: String) -> ReachabilitySnapshot {
        ReachabilitySnapshot(
            status: .unknown, isIPv4Reachable: false, isIPv6Reachable: false,
            interface: "", transport: nil, isMetered: false, reason: why
        )
    }
}

/// One answer of `CheckDestination` (or `CheckAddress`) for one address of a monitored destination.
package struct AddressAnswer: Sendable, Equatable {
    /// The literal address asked about.
    var address: String
    /// The daemon's answer; `.notReachable` when it rejected the address.
    var status: ReachabilityStatus
    /// The interface that would carry traffic to it, "" when none.
    var interface: String
    /// How a connection gets there; nil from `CheckAddress`.
    var path: DestinationPath?
    /// Where to connect ("" from `CheckAddress`).
    var connectAddress: String

    /// An answer for `address`: `status` through `interface`, by `path` at `connectAddress`.
    package init(address: String, status: ReachabilityStatus, interface: String, path: DestinationPath? = nil, connectAddress: String = "") {
        self.address = address
        self.status = status
        self.interface = interface
        self.path = path
        self.connectAddress = connectAddress
    }

    /// The answer `CheckDestination` gave for `address` over the bus or Varlink, each of its
    /// values read by `text` (a key missing reads as "").
    init(address: String, checkedDestination text: (String) -> String) {
        self.init(
            address: address, status: ReachabilityStatus(rawValue: text("status")) ?? .unknown, interface: text("interface"),
            path: DestinationPath(rawValue: text("via")), connectAddress: text("address")
        )
    }

    /// The status's rank: reachable answers beat not-reachable ones, which beat unknown ones.
    var rank: Int {
        status.isReachable ? 2 : (status == .notReachable ? 1 : 0)
    }

    /// The best of `answers`: the highest rank, the earliest (in resolver order) among equals.
    static func best(of answers: [AddressAnswer]) -> AddressAnswer? {
        answers.enumerated().max { lhs, rhs in
            lhs.element.rank != rhs.element.rank ? lhs.element.rank < rhs.element.rank : lhs.offset > rhs.offset
        }?.element
    }

    /// The snapshot a manager for `destination` publishes when its addresses answered `answers`.
    static func snapshot(destination: String, answers: [AddressAnswer]) -> ReachabilitySnapshot {
        guard let best = best(of: answers) else {
            return ReachabilitySnapshot(
                status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                interface: "", transport: nil, isMetered: false, reason: "\(destination) has no address"
            )
        }
        let reachable = answers.filter(\.status.isReachable)
        let through = best.path == .nat64 ? " through NAT64 at \(best.connectAddress)" : best.path == .clat ? " through the CLAT" : ""
        let reason = best.status.isReachable
            ? "\(best.address) is reachable via \(best.interface)\(through)"
            : "no route to \(answers.map(\.address).joined(separator: ", "))"
        // Each family's link is that of its first reachable address (in resolver order).
        let ipv4 = reachable.first { IPAddress($0.address)?.unmappingIPv4.family == .ipv4 }
        let ipv6 = reachable.first { IPAddress($0.address)?.unmappingIPv4.family == .ipv6 }
        var snapshot = ReachabilitySnapshot(
            status: best.status,
            isIPv4Reachable: ipv4 != nil,
            isIPv6Reachable: ipv6 != nil,
            interface: best.interface,
            transport: best.transport,
            isMetered: best.status == .reachableViaWWAN,
            reason: reason,
            ipv4Link: (ipv4?.interface ?? "", ipv4?.transport),
            ipv6Link: (ipv6?.interface ?? "", ipv6?.transport)
        )
        snapshot.destinationPath = best.path
        snapshot.destinationAddress = best.connectAddress
        snapshot.meteredReason = best.status.isReachable ? .transport : .noRoute
        return snapshot
    }

    /// The transport the status names: the medium beneath a tunnel when the daemon knew it,
    /// `other` for `reachable-via-other`; nil when not reachable.
    var transport: Transport? {
        switch status {
        case .reachableViaWiFi: .wifi
        case .reachableViaWWAN: .wwan
        case .reachableViaEthernet: .ethernet
        case .reachableViaOther: .other
        case .unknown, .notReachable: nil
        }
    }
}
