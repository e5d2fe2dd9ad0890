import Foundation
import TestSupport

/// The soak's draws from its seeded generator. Its own `number(below:)` keeps the sequence
/// independent of the standard library's sampling, so a printed seed replays the same churn.
extension SplitMix64 {
    /// A number in `0..<bound` (the modulo bias is irrelevant here).
    mutating func number(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// A number in `range`.
    mutating func number(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + number(below: range.count)
    }

    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool {
        number(below: 100) < percent
    }

    /// One element of a non-empty array.
    mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[number(below: elements.count)]
    }
}

/// One `ip -batch` file: `ip -n NS [OPTIONS] -force -batch FILE` (`-force`: a line the kernel
/// refuses, such as deleting a route the kernel already flushed, does not stop the rest).
struct IPBatch {
    /// Options before `-batch`: `["-6"]` for IPv6 rules, which `ip` cannot tell from their text.
    var options: [String] = []
    /// The commands, without the leading `ip`.
    var lines: [String]
}

/// One of the soak's three veth links (`ChurnBurst.configureLinks`): `ra0`, `rb0`, `rc0`, with
/// peers `ra1`, `rb1`, `rc1`, subnets 10.77/78/79.0.0/24 and 2001:db8:77/78/79::/64, gateways `.1`
/// and `::1` (which never answer: only the routing decision matters).
struct SoakLink {
    /// The link, e.g. `ra0`.
    let name: String
    /// Its veth peer, whose state is the link's carrier.
    let peer: String
    /// 77, 78 or 79.
    let subnet: Int
    /// 0, 1 or 2: the last digit of every metric on this link, so that no two links ever tie
    /// (a tie would make the kernel's choice depend on round-robin or a flow hash).
    let position: Int

    /// The three links.
    static let all = [
        SoakLink(name: "ra0", peer: "ra1", subnet: 77, position: 0),
        SoakLink(name: "rb0", peer: "rb1", subnet: 78, position: 1),
        SoakLink(name: "rc0", peer: "rc1", subnet: 79, position: 2),
    ]

    /// The primary IPv4 address (its /24 makes the gateway reachable).
    var ipv4Address: String { "10.\(subnet).0.2/24" }
    /// The IPv4 gateway.
    var ipv4Gateway: String { "10.\(subnet).0.1" }
    /// The primary IPv6 address.
    var ipv6Address: String { "2001:db8:\(subnet)::2/64" }
    /// The /48 around the link's IPv6 addresses, for source-specific routes and rules.
    var ipv6SourcePrefix: String { "2001:db8:\(subnet)::/48" }
    /// A point-to-point IPv4 address: no subnet, the peer on the other end.
    var pointToPointAddress: String { "10.\(subnet).3.2 peer \(pointToPointPeer)/32" }
    /// The peer of ``pointToPointAddress``.
    var pointToPointPeer: String { "10.\(subnet).3.1" }
    /// The IPv6 gateway.
    var ipv6Gateway: String { "2001:db8:\(subnet)::1" }

    /// The default route of `family` (`4` or `6`) through this link with metric `100 * rank + position`.
    func defaultRoute(family: Int, rank: Int, table: String? = nil, onlink: Bool = false) -> String {
        let gateway = family == 4 ? "\(SoakChurn.ipv4Default) via \(ipv4Gateway)" : "\(SoakChurn.ipv6Default) via \(ipv6Gateway)"
        return "route replace \(gateway) dev \(name)" + (table.map { " table \($0)" } ?? "")
            + " metric \(100 * rank + position)" + (onlink ? " onlink" : "")
    }

    /// Its addresses of `family`: the primary one, a host address without a subnet (routes via a
    /// gateway then need `onlink`), and one that is not global (IPv4 `scope link`, IPv6
    /// link-local), each with what `ip address add` needs after it.
    func addresses(family: Int) -> [String] {
        family == 4
            ? [ipv4Address, "10.\(subnet).1.2/32", "10.\(subnet).2.2/24 scope link"]
            : [ipv6Address + " nodad", "2001:db8:\(subnet):1::2/128 nodad", "fe80::\(subnet):2/64 nodad"]
    }
}

/// The soak's random churn (issue 6, widened by issue 11): bursts of route, address, link and
/// rule changes over the three `SoakLink`s — with source hints, a global address on `lo`, IPv6
/// source-specific routes and rules, point-to-point addresses and nexthop objects — drawn from
/// a seeded generator. Everything it can produce is decidable by `ReachabilityOracle`: the links are veth
/// pairs (Ethernet, not ignored by name), and metrics never tie.
///
/// It remembers only which link it deleted and which bulk routes it added; the kernel's state
/// (routes flushed when a link goes down or loses its last address, IPv6 addresses flushed at
/// down) is not modelled, and lines the kernel refuses are part of the churn: the oracle reads
/// the truth.
struct SoakChurn {
    /// The IPv4 default prefix.
    static let ipv4Default = "0.0.0.0/0"
    /// The IPv6 default prefix.
    static let ipv6Default = "::/0"
    /// The policy table the rules point to.
    static let policyTable = "100"
    /// The global IPv4 address on `lo` (a /32, as unnumbered and BGP hosts have) when added.
    static let loopbackIPv4 = "192.0.2.77/32"
    /// The global IPv6 address on `lo` when added.
    static let loopbackIPv6 = "2001:db8:ee::77/128"

    private var generator: SplitMix64
    private var deletedLinks: Set<String> = []
    private var bulkSets: Set<Int> = []

    /// Operations drawn so far.
    private(set) var operations = 0
    /// Of which bulk additions or deletions of 200 routes the daemon's filter drops.
    private(set) var bulkOperations = 0
    /// `ip -batch` lines written so far.
    private(set) var lines = 0

    /// - Parameter seed: the generator's seed.
    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    /// The churn of one cycle: 1–6 bursts of 1–8 operations each, each burst after a pause of
    /// 0–50 ms.
    mutating func nextCycle() -> [(batches: [IPBatch], pause: Duration)] {
        (0..<generator.number(in: 1...6)).map { _ in
            var main: [String] = []
            var ipv6Rules: [String] = []
            for _ in 0..<generator.number(in: 1...8) {
                let (operation, isIPv6Rule) = nextOperation()
                if isIPv6Rule { ipv6Rules += operation } else { main += operation }
            }
            lines += main.count + ipv6Rules.count
            let batches = [IPBatch(lines: main), IPBatch(options: ["-6"], lines: ipv6Rules)].filter { !$0.lines.isEmpty }
            return (batches, .milliseconds(generator.number(in: 0...50)))
        }
    }

    /// One operation's lines, and whether they are IPv6 rules (for an `ip -6` batch).
    private mutating func nextOperation() -> (lines: [String], isIPv6Rule: Bool) {
        operations += 1
        let link = generator.pick(SoakLink.all)
        let family = generator.chance(50) ? 4 : 6
        let defaultPrefix = family == 4 ? Self.ipv4Default : Self.ipv6Default
        let rank = generator.number(in: 1...3)
        // Toggles take the harmful direction 35 % of the time (links down, carrier lost) or 20 %
        // (the rule to table 100, routes blocking the probe: each blocks a family on every link),
        // so that most checks find something reachable.
        let harmful = generator.chance(35)
        switch generator.number(below: 118) {
        case 0..<22:  // a default route in main, sometimes onlink (possible without an address)
            return ([link.defaultRoute(family: family, rank: rank, onlink: generator.chance(20))], false)
        case 22..<32:
            return (["route del \(defaultPrefix) dev \(link.name)" + (generator.chance(50) ? " metric \(100 * rank + link.position)" : "")], false)
        case 32..<44:  // addresses: mostly the primary one
            return (["address add \(address(of: link, family: family)) dev \(link.name)"], false)
        case 44..<54:  // including the one the routes depend on
            let address = address(of: link, family: family).split(separator: " ").first.map(String.init) ?? ""
            return (["address del \(address) dev \(link.name)"], false)
        case 54..<60:
            return (["link set \(link.name) \(harmful ? "down" : "up")"], false)
        case 60..<66:  // carrier: the peer's state
            return (["link set \(link.peer) \(harmful ? "down" : "up")"], false)
        case 66..<72:
            return ([policyTableRoute(link: link, family: family, rank: rank)], false)
        case 72..<76:  // the rule sending every lookup to table 100
            let add = harmful && generator.chance(60)
            return ([add ? "rule add pref 1000 lookup \(Self.policyTable)" : "rule del pref 1000"], family == 6)
        case 76..<79:  // an unreachable / prohibit route covering the probe destination
            let blocker = family == 4 ? "unreachable 8.8.8.0/24" : "prohibit 2001:4860::/32"
            return (["route \(harmful && generator.chance(60) ? "replace" : "del") \(blocker)"], false)
        case 79..<80:  // rc0 deleted (a repair of rc0 makes it again)
            deletedLinks.insert("rc0")
            return (["link del rc0"], false)
        case 80..<82:
            bulkOperations += 1
            return (bulkRoutes(set: generator.number(below: 4)), false)
        case 82..<88:  // a link repaired at once: made again if deleted (no IPv6 link-local
            // address), up, carrier, primary addresses, default routes
            let made = deletedLinks.remove(link.name) == nil ? [] : [
                "link add \(link.name) type veth peer name \(link.peer)",
                "link set \(link.name) addrgenmode none", "link set \(link.peer) addrgenmode none",
            ]
            return (made + [
                "link set \(link.peer) up", "link set \(link.name) up",
                "address add \(link.ipv4Address) dev \(link.name)", "address add \(link.addresses(family: 6)[0]) dev \(link.name)",
                link.defaultRoute(family: 4, rank: rank), link.defaultRoute(family: 6, rank: rank),
            ], false)
        case 88..<100:  // more default routes: without them nothing is reachable
            return ([link.defaultRoute(family: family, rank: rank)], false)
        case 100..<103:  // a source hint: on lo, the link's own primary address, another link's
            let source = generator.pick(family == 4
                ? [Self.loopbackIPv4, link.ipv4Address, generator.pick(SoakLink.all).ipv4Address]
                : [Self.loopbackIPv6, link.ipv6Address, generator.pick(SoakLink.all).ipv6Address])
            let address = source.split(separator: "/").first.map(String.init) ?? source
            return ([link.defaultRoute(family: family, rank: rank) + " src \(address)"], false)
        case 103..<105:  // the global address on lo that unnumbered links send from
            let address = family == 4 ? Self.loopbackIPv4 : Self.loopbackIPv6
            return (["address \(harmful ? "del" : "add") \(address) dev lo"], false)
        case 105..<108:  // an IPv6 default route only for sources in the link's /48
            let route = "route \(harmful ? "del" : "replace") \(Self.ipv6Default) from \(link.ipv6SourcePrefix)"
            return ([harmful ? route + " dev \(link.name)" : route + " via \(link.ipv6Gateway) dev \(link.name) metric \(100 * rank + link.position)"], false)
        case 108..<110:  // an IPv6 rule sending the link's /48 sources to table 100
            return ([harmful ? "rule del pref 900" : "rule add pref 900 from \(link.ipv6SourcePrefix) lookup \(Self.policyTable)"], true)
        case 112..<118:  // nexthop objects: (re)made on a link, a default route through one, deleted
            return (nexthopOperation(link: link, family: family, rank: rank, harmful: harmful), false)
        default:  // a point-to-point address (a peer, no subnet) and a default route via the peer
            return harmful ? (["address del \(link.pointToPointAddress) dev \(link.name)"], false) : ([
                "address add \(link.pointToPointAddress) dev \(link.name)",
                "route replace \(Self.ipv4Default) via \(link.pointToPointPeer) dev \(link.name) metric \(100 * rank + link.position)",
            ], false)
        }
    }

    /// A change to the family's nexthop object of a link (id `SUBNET4` or `SUBNET6`, e.g. 774):
    /// made or replaced through this link's gateway or another's (moving every route that uses
    /// it, without a route message under `nexthop_compat_mode=0`), a default route through it,
    /// or its deletion (which removes those routes).
    private mutating func nexthopOperation(link: SoakLink, family: Int, rank: Int, harmful: Bool) -> [String] {
        let id = "\(link.subnet)\(family)"
        if harmful { return ["nexthop del id \(id)"] }
        let through = generator.chance(70) ? link : generator.pick(SoakLink.all)
        let gateway = family == 4 ? through.ipv4Gateway : through.ipv6Gateway
        let prefix = family == 4 ? Self.ipv4Default : Self.ipv6Default
        switch generator.number(below: 3) {
        case 0: return ["nexthop replace id \(id) via \(gateway) dev \(through.name)"]
        case 1: return ["route replace \(prefix) nhid \(id) metric \(100 * rank + link.position)"]
        default: return ["nexthop replace id \(id) via \(gateway) dev \(through.name)", "route replace \(prefix) nhid \(id) metric \(100 * rank + link.position)"]
        }
    }

    /// An address of the link: the primary one 60 %, the host one 25 %, the non-global one 15 %;
    /// an IPv6 one now and then without `nodad` (tentative for a second).
    private mutating func address(of link: SoakLink, family: Int) -> String {
        let choice = generator.number(below: 100)
        let addresses = link.addresses(family: family)
        let address = addresses[choice < 60 ? 0 : choice < 85 ? 1 : 2]
        if family == 6, generator.chance(10) { return address.replacingOccurrences(of: " nodad", with: "") }
        return address
    }

    /// A change to table 100: a default route via the link, `unreachable`, `throw`, or a deletion.
    private mutating func policyTableRoute(link: SoakLink, family: Int, rank: Int) -> String {
        let prefix = family == 4 ? Self.ipv4Default : Self.ipv6Default
        switch generator.number(below: 10) {
        case 0..<5: return link.defaultRoute(family: family, rank: rank, table: Self.policyTable, onlink: generator.chance(20))
        case 5..<7: return "route replace unreachable \(prefix) table \(Self.policyTable)"
        case 7: return "route replace throw \(prefix) table \(Self.policyTable)"
        default: return "route del \(prefix) table \(Self.policyTable)"
        }
    }

    /// 100 IPv4 host routes and 100 IPv6 ones that cannot change the answer (the daemon's kernel
    /// filter drops them), added or deleted again; through `lo`, which never goes down.
    private mutating func bulkRoutes(set: Int) -> [String] {
        let verb = bulkSets.remove(set) == nil ? "add" : "del"
        if verb == "add" { bulkSets.insert(set) }
        return (0..<100).flatMap { host in
            ["route \(verb) 100.64.\(set).\(host)/32 dev lo", "route \(verb) 2001:db8:ff:\(set)::\(host)/128 dev lo"]
        }
    }
}
