#if canImport(Glibc)
import Glibc
#endif

/// The stages of one change through the daemon, timestamped on request for the benchmark's
/// stage table (docs/benchmarks.md): off unless `REACHABILITYD_STAGE_TIMES=PATH` is set when
/// the daemon starts, and then every hook costs one nil check.
///
/// Each change of `Status` becomes one line of PATH: the `CLOCK_MONOTONIC` nanoseconds of
/// ``Stage/allCases``, in order, space-separated (0 where a stage was not reached, e.g. an
/// evaluation no netlink event started).
///
/// Confined to the daemon's one serial queue, where every stage happens.
package final class StageTimes: @unchecked Sendable {
    /// A point a change passes, in the order it passes them.
    package enum Stage: Int, CaseIterable, Sendable {
        /// A netlink wake-up: the first read of its batch.
        case received
        /// The walk starts (the batch was read and applied to the mirror).
        case evaluating
        /// The kernel answered the probes' lookups.
        case answered
        /// The bus object starts publishing the change.
        case publishing
        /// `StatusChanged` was handed to the bus socket (`sd_bus_send`); the change's other
        /// signals follow it.
        case sent
    }

    /// The recorder of this process: nil unless `REACHABILITYD_STAGE_TIMES` names a file that
    /// could be opened (read once, at first use).
    package static let recorder: StageTimes? = getenv("REACHABILITYD_STAGE_TIMES").flatMap { StageTimes(path: String(cString: $0)) }

    private let descriptor: Int32
    private var marks = [UInt64](repeating: 0, count: Stage.allCases.count)

    private init?(path: String) {
        guard let descriptor = try? valueOrErrno("open \(path)", { open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) })
        else { return nil }
        self.descriptor = descriptor
    }

    /// Records that the change under way reached `stage` now. ``Stage/received`` starts a new
    /// change; ``Stage/sent`` writes the change's line.
    package func mark(_ stage: Stage) {
        if stage == .received { marks = marks.map { _ in 0 } }
        marks[stage.rawValue] = clockNanoseconds(CLOCK_MONOTONIC)
        guard stage == .sent else { return }
        let line = marks.map(String.init).joined(separator: " ") + "\n"
        marks = marks.map { _ in 0 }
        try? writeAll(Array(line.utf8), to: descriptor, action: "write the stage times")
    }
}
