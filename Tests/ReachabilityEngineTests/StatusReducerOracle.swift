// Shared by the replay tests and the libFuzzer target (scripts/fuzz/StatusReducerFuzzer.swift,
// built by scripts/fuzz/build.sh), so that both check exactly the same invariants.
#if canImport(Glibc)
import Glibc
#endif
import RTNetlink
import ReachabilityCore
import SystemSupport
@testable import ReachabilityEngine

/// One input of the status reducer's fuzzer: rtnetlink datagrams, each with the role it plays.
///
/// Bytes: records of `role: UInt8, length: UInt16 little-endian, datagram: length bytes`. The
/// role is taken modulo the number of roles; a length past the end takes what is left; a record
/// header cut short ends the input. `scripts/fuzz/capture-corpus.py` writes the seeds.
struct ReducerFuzzInput {
    /// What a datagram is to the engine.
    enum Role: UInt8, CaseIterable {
        /// Part of a link and address dump; consecutive parts form one dump (a resynchronisation).
        case dump = 0
        /// Events read in one wake-up, applied as one batch.
        case events = 1
        /// The reply to the plain route lookup of the IPv4 probe destination.
        case ipv4Answer = 2
        /// The reply to the `RTM_F_FIB_MATCH` lookup of the IPv4 probe destination.
        case ipv4MatchedEntry = 3
        /// The reply to the plain route lookup of the IPv6 probe destination.
        case ipv6Answer = 4
        /// The reply to the `RTM_F_FIB_MATCH` lookup of the IPv6 probe destination.
        case ipv6MatchedEntry = 5
    }

    /// One datagram and its role.
    struct Record {
        var role: Role
        var datagram: [UInt8]
    }

    /// The records, in order.
    var records: [Record] = []

    /// Splits `bytes` into records.
    init(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while bytes.count - offset >= 3 {
            let role = Role(rawValue: bytes[offset] % UInt8(Role.allCases.count))!
            let length = min(Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8, bytes.count - offset - 3)
            records.append(Record(role: role, datagram: Array(bytes[(offset + 3)..<(offset + 3 + length)])))
            offset += 3 + length
        }
    }
}

/// Runs a ``ReducerFuzzInput`` through the status reducer as the engine would, and checks after
/// every step what must hold whatever the kernel (or a corrupt message) says:
///
/// - the status is one of the six wire values, never `unknown` once evaluated, and the
///   snapshot agrees with itself (reachable ⇔ a family reachable ⇔ an interface and a transport,
///   and that interface is a link of the table; `Interfaces` lists the table's links but
///   loopback, in index order);
/// - applying the same dump twice gives the same table and the same snapshot, and so does
///   applying its messages once more on top, or a batch of events twice;
/// - `removeAll` followed by a dump gives the same table as a fresh table built from that dump.
enum StatusReducerOracle {
    /// A sysfs root that does not exist: the fuzz path reads no real sysfs.
    static let sysfsRoot = "/nonexistent/reachabilityd-fuzz/sys"

    /// What one run saw.
    struct Outcome {
        /// The snapshot after each dump and each batch of events.
        var snapshots: [ReachabilitySnapshot] = []
        /// The invariants that did not hold, in words; empty when all held.
        var violations: [String] = []
    }

    /// The replies the engine last got for one probe destination.
    private struct ProbeAnswers {
        var answer = NetlinkQueryClient.RouteAnswer.error(errno: ENETUNREACH)
        var matchedEntry: NetlinkQueryClient.RouteAnswer?

        /// The answers as the engine would have them. The source a `connect` would select is
        /// taken as the kernel mostly picks it: a usable global address of the family on the
        /// route's output link, else one on any link (the lowest), else none.
        func answers(family: AddressFamily, table: LinkTable) -> StatusReducer.KernelAnswers {
            var outputLink: InterfaceIndex?
            if case .route(let route) = answer { outputLink = route.outputInterface }
            let source = table.addresses
                .filter { $0.key.family == family && $0.value.isUsableGlobal }
                .map { (onOutputLink: $0.key.index == outputLink, address: $0.key.address) }
                .min { $0.onOutputLink != $1.onOutputLink ? $0.onOutputLink : $0.address.bytes.lexicographicallyPrecedes($1.address.bytes) }?
                .address
            return StatusReducer.KernelAnswers(
                source: source.map { .success($0) } ?? .failure(SystemError(action: "connect", errno: EADDRNOTAVAIL)),
                lookup: StatusReducer.routeLookup(answer: answer, matchedEntry: matchedEntry)
            )
        }
    }

    /// Runs `input` and checks the invariants.
    static func run(_ input: ReducerFuzzInput) -> Outcome {
        var outcome = Outcome()
        var table = LinkTable(inspector: SysfsLinkInspector(root: sysfsRoot))
        var ipv4 = ProbeAnswers()
        var ipv6 = ProbeAnswers()
        var dump: [NetlinkMessage] = []
        let configuration = DaemonConfiguration.default
        func snapshot(of table: LinkTable) -> ReachabilitySnapshot {
            StatusReducer.snapshot(
                of: table, ipv4: ipv4.answers(family: .ipv4, table: table),
                ipv6: ipv6.answers(family: .ipv6, table: table),
                configuration: configuration
            )
        }
        func check(_ holds: Bool, _ what: @autoclosure () -> String) {
            if !holds { outcome.violations.append(what()) }
        }
        func evaluate(after step: String) {
            let published = snapshot(of: table)
            outcome.snapshots.append(published)
            check(snapshot(of: table) == published, "\(step): evaluating twice gave two snapshots")
            check(ReachabilityStatus(rawValue: published.status.rawValue) == published.status && published.status != .unknown,
                  "\(step): status \(published.status.rawValue) is not one of the evaluated wire values")
            let reachable = published.status.isReachable
            check(reachable == (published.isIPv4Reachable || published.isIPv6Reachable), "\(step): status \(published.status.rawValue) but IPv4 \(published.isIPv4Reachable), IPv6 \(published.isIPv6Reachable)")
            check(reachable == !published.interface.isEmpty, "\(step): status \(published.status.rawValue) with interface '\(published.interface)'")
            check(reachable == (published.transport != nil), "\(step): status \(published.status.rawValue) with transport \(published.transport?.rawValue ?? "none")")
            check(!reachable || table.links.values.contains { $0.name == published.interface },
                  "\(step): reachable via '\(published.interface)', which is no link of the table")
            let interfaces = table.interfaces(configuration: configuration)
            check(interfaces.map(\.index) == table.links.values.filter { !$0.isLoopback }.map(\.index).sorted(),
                  "\(step): Interfaces lists \(interfaces.map(\.name)), not the table's links but loopback in index order")
        }
        func applyDump(at position: Int) {
            let step = "dump ending at record \(position)"
            var fresh = LinkTable(inspector: SysfsLinkInspector(root: sysfsRoot))
            fresh.replace(withDump: dump)
            table.replace(withDump: dump)
            check(table == fresh, "\(step): removeAll and the dump differ from a fresh table built from it")
            var twice = table
            twice.replace(withDump: dump)
            check(twice == table && snapshot(of: twice) == snapshot(of: table), "\(step): the same dump twice changed the table or the snapshot")
            var replayed = table
            for message in dump { replayed.apply(message.payload) }
            check(replayed == table && snapshot(of: replayed) == snapshot(of: table), "\(step): the dump's messages applied again changed the table or the snapshot")
            dump = []
            evaluate(after: step)
        }
        for (position, record) in input.records.enumerated() {
            let parsed = NetlinkParser.parse(datagram: record.datagram)
            let messages = parsed.compactMap { try? $0.get() }
            if record.role != .dump, !dump.isEmpty { applyDump(at: position - 1) }
            switch record.role {
            case .dump:
                dump += messages
            case .events:
                let step = "events at record \(position)"
                // As the engine applies them: links and addresses, then default routes.
                func apply(_ messages: [NetlinkMessage], to table: inout LinkTable) {
                    for message in messages where !table.apply(message.payload) {
                        table.applyDefaultRoute(message.payload, replacing: message.header.isReplacement)
                    }
                }
                apply(messages, to: &table)
                var twice = table
                apply(messages, to: &twice)
                check(twice == table && snapshot(of: twice) == snapshot(of: table), "\(step): the same events twice changed the table or the snapshot")
                evaluate(after: step)
            case .ipv4Answer:
                ipv4.answer = NetlinkQueryClient.RouteAnswer(reply: parsed) ?? ipv4.answer
            case .ipv4MatchedEntry:
                ipv4.matchedEntry = NetlinkQueryClient.RouteAnswer(reply: parsed) ?? ipv4.matchedEntry
            case .ipv6Answer:
                ipv6.answer = NetlinkQueryClient.RouteAnswer(reply: parsed) ?? ipv6.answer
            case .ipv6MatchedEntry:
                ipv6.matchedEntry = NetlinkQueryClient.RouteAnswer(reply: parsed) ?? ipv6.matchedEntry
            }
        }
        if !dump.isEmpty { applyDump(at: input.records.count - 1) }
        evaluate(after: "the end")
        return outcome
    }
}
