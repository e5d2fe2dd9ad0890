import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// RFC 7050 discovery of the NAT64 prefix, the last resort: while IPv6 has a path, no router
/// advertised a prefix (to the kernel or to systemd-networkd), and either the host is IPv6-only
/// (no IPv4 route: NetworkManager handles router advertisements itself and keeps their PREF64
/// option to itself) or the connectivity check is configured. The AAAA records of
/// `ipv4only.arpa` are looked up through the system resolver, as an application's lookup goes
/// (the check client's lookups: away from the queue, bounded), at once on IPv6's path and then
/// every `CheckIntervalSec=`; while lookups find no prefix (a resolver that did not answer yet,
/// a DNS64 not reachable yet) again after 1 s, doubling up to that interval, as the check
/// retries. Lookups start at most once per ``ConnectivityCheckSchedule/pathChangeSpacingSeconds``:
/// a flapping route costs one lookup per spacing, not one per flip.
///
/// The prefix found is kept while IPv6's path stays on its link (a new gateway there is the
/// same network, and the same DNS64), and replaced only by a lookup's answer; it is dropped
/// when the link changes (another network's DNS64 may use another prefix: nothing is published
/// until its own lookup answers, as a router's prefix goes with its link) or discovery is no
/// longer wanted. Confined to the engine's queue.
final class RFC7050Discovery: @unchecked Sendable {
    /// The prefix found, and the path it was found on.
    struct Discovered: Equatable {
        var prefix: IPPrefix
        var path: CheckPath
    }

    private let queue: DispatchQueue
    /// The resolver's way (the check's client); nil: nothing is looked up.
    var client: HTTPCheckClient?
    /// Called on the queue when ``discovered`` changed from a lookup's answer (never from
    /// ``follow(ipv6Path:intervalSeconds:)``).
    var onChange: () -> Void = {}
    /// The prefix in use from discovery; nil: none found, or not looked for.
    private(set) var discovered: Discovered?
    /// IPv6's path while discovery is wanted; nil: not wanted.
    private var path: CheckPath?
    private var intervalSeconds: Double = 300
    /// Counts the links followed: a lookup's answer for an earlier one is ignored.
    private var generation = 0
    /// Lookups in a row on this link that found no prefix.
    private var misses = 0
    private var isLookupOut = false
    /// When the last lookup started (nanoseconds of `DispatchTime`); nil: none yet.
    private var lastLookup: UInt64?
    private var timer: DispatchSourceTimer?

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    deinit {
        timer?.cancel()
    }

    /// Follows IPv6's path while discovery is wanted (nil: not wanted, or IPv6 has none): a
    /// path on another link drops what was found and looks up (at once, or once the spacing
    /// since the last lookup has passed); a new gateway on the same link keeps it.
    func follow(ipv6Path next: CheckPath?, intervalSeconds: Double) {
        self.intervalSeconds = intervalSeconds
        guard next != path else { return }
        let sameLink = next != nil && next?.link == path?.link
        path = next
        if sameLink, let next {
            discovered?.path = next
            return
        }
        generation += 1
        misses = 0
        isLookupOut = false
        discovered = nil
        timer?.schedule(deadline: .distantFuture)
        guard next != nil else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = ConnectivityCheckSchedule.startAfterPathChange(at: now, lastStart: lastLookup)
        if due <= now { lookUp() } else { armTimer(at: DispatchTime(uptimeNanoseconds: due)) }
    }

    /// `Explain()`'s line for the prefix found; nil when none.
    var explanation: String? {
        guard let discovered else { return nil }
        return "  \(discovered.prefix) from RFC 7050 discovery (AAAA of \(RFC7050.name) through the system resolver) over \(discovered.path.linkName), "
            + "checked again every \(Int(intervalSeconds)) s"
    }

    private func lookUp() {
        guard let client, path != nil, !isLookupOut else { return }
        lastLookup = DispatchTime.now().uptimeNanoseconds
        isLookupOut = true
        let asked = generation
        // (The answer comes on the queue.)
        client.lookUpAddresses(of: RFC7050.name, family: .ipv6) { [weak self] answers in
            self?.answered(answers, generation: asked)
        }
    }

    private func answered(_ answers: [IPAddress], generation asked: Int) {
        guard asked == generation, let path else { return }
        isLookupOut = false
        let next = RFC7050.prefixes(fromAnswers: answers).first.map { Discovered(prefix: IPPrefix($0.network, length: $0.length), path: path) }
        if next?.prefix != discovered?.prefix {
            Log.info(next.map { "RFC 7050: the NAT64 prefix \($0.prefix) (\(RFC7050.name) through the system resolver)." } ?? "RFC 7050: no NAT64 prefix.")
            discovered = next
            onChange()
        }
        misses = next == nil ? misses + 1 : 0
        let interval = Duration.milliseconds(Int(intervalSeconds * 1000))
        let delay = misses == 0 ? interval : RetryDelays(first: .seconds(1), longest: interval).delay(afterFailures: misses)
        if misses > 0 {
            Log.debug("RFC 7050: no NAT64 prefix in the AAAA records of \(RFC7050.name) over \(path.linkName); asked again in \(delay).")
        }
        armTimer(at: .now() + .milliseconds(Int(delay / .milliseconds(1))))
    }

    /// Arms the one timer (made at the first use) for the next lookup at `deadline`.
    private func armTimer(at deadline: DispatchTime) {
        let timer = timer ?? {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.lookUp() }
            timer.resume()
            self.timer = timer
            return timer
        }()
        timer.schedule(deadline: deadline)
    }
}
