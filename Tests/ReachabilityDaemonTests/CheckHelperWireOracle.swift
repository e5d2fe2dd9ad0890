// Shared by the replay tests and the libFuzzer target (scripts/fuzz/CheckHelperWireFuzzer.swift,
// built by scripts/fuzz/build.sh), so that both check exactly the same invariants.
import ReachabilityCore
@testable import reachabilityd

/// What must hold of any datagram the daemon reads from its check helper: decoding never traps;
/// a message it accepts carries only what an honest helper sends, which the daemon can print
/// and publish (finite seconds in range, a three-digit status, a web redirection, a bounded
/// body, plain texts), and encodes back to the very bytes it came from; decoding is pure.
enum CheckHelperWireOracle {
    /// The invariants `datagram` breaks (none: all hold).
    static func violations(of datagram: [UInt8]) -> [String] {
        let first = Result { () throws(CheckHelperMessage.Malformed) in try CheckHelperMessage(decoding: datagram) }
        let second = Result { () throws(CheckHelperMessage.Malformed) in try CheckHelperMessage(decoding: datagram) }
        var broken: [String] = []
        if first != second { broken.append("decoding is not deterministic") }
        guard case .success(let message) = first else { return broken }
        if message.encoded != datagram { broken.append("\(message) encodes to other bytes") }
        if case .exchanged(_, let outcome, let seconds, let lookup) = message {
            // What the engine does with an answer: its duration in whole milliseconds, its summary.
            if !seconds.isFinite || seconds < 0 || seconds > CheckHelperMessage.longestSeconds {
                broken.append("seconds \(seconds) accepted")
            } else {
                _ = Int(seconds * 1000)
            }
            switch outcome {
            case .response(let status, let redirect, let body):
                if !CheckHelperMessage.statusCodes.contains(status) { broken.append("status \(status) accepted") }
                if let redirect, !["http", "https"].contains(URLScheme.of(redirect)) { broken.append("redirection \(redirect) accepted") }
                if body.count > HTTPCheckOutcome.bodyLimit { broken.append("a body of \(body.count) bytes accepted") }
            case .failed(let why, _):
                if why.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { broken.append("a control character accepted") }
            }
            _ = outcome.summary
            if case .failed(let why)? = lookup, why.utf8.count > CheckHelperMessage.textLimit { broken.append("a lookup failure over the limit accepted") }
        }
        if case .lookedUp(_, let addresses) = message, addresses.contains(where: { IPAddress($0) == nil }) {
            broken.append("an address that is none accepted")
        }
        return broken
    }
}
