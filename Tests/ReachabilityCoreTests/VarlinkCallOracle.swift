import ReachabilityCore

/// The checks the Varlink call fuzzer (`scripts/fuzz/VarlinkCallFuzzer.swift`) makes on each
/// input, and `VarlinkCodecTests` on every seed and crasher: what a peer's bytes decode to,
/// message by message, as the daemon's server takes them.
enum VarlinkCallOracle {
    /// What one message of a stream came to.
    enum Outcome: Hashable {
        /// A call, and what it asks (or the error it is answered with).
        case call(VarlinkCall, Result<VarlinkRequest, VarlinkError>)
        /// A message that is no call: answered with the error, then the connection closes.
        case refused(VarlinkError)
        /// The stream ended inside a message.
        case truncated
    }

    /// The outcomes of `bytes` received in pieces of `pieceSize` bytes, up to the first refusal.
    static func outcomes(of bytes: [UInt8], pieceSize: Int) -> [Outcome] {
        var framer = VarlinkFramer()
        var outcomes: [Outcome] = []
        var offset = 0
        while offset < bytes.count {
            framer.append(bytes[offset..<min(bytes.count, offset + pieceSize)])
            offset += pieceSize
            do throws(VarlinkError) {
                while let message = try framer.next() {
                    let call = try VarlinkCall(decoding: message)
                    outcomes.append(.call(call, Result { () throws(VarlinkError) -> VarlinkRequest in try VarlinkRequest(call) }))
                }
            } catch {
                return outcomes + [.refused(error)]
            }
        }
        return framer.holdsPartialMessage ? outcomes + [.truncated] : outcomes
    }

    /// The invariants `bytes` breaks, as one sentence each; none when they all hold: the
    /// outcomes do not depend on how the bytes arrive; an accepted call was UTF-8 and within the
    /// size limit and encodes to a message that decodes to it again; every answer is one JSON
    /// object and one NUL.
    static func violations(of bytes: [UInt8]) -> [String] {
        var violations: [String] = []
        let whole = outcomes(of: bytes, pieceSize: max(1, bytes.count))
        for pieceSize in [1, 7, 4096] where outcomes(of: bytes, pieceSize: pieceSize) != whole {
            violations.append("the outcomes differ when the bytes arrive \(pieceSize) at a time")
        }
        for outcome in whole {
            switch outcome {
            case .call(let call, let request):
                let encoded = call.encoded
                if (try? VarlinkCall(decoding: encoded.dropLast())) != call { violations.append("\(call.method): does not survive encoding") }
                if case .failure(let error) = request, let problem = problem(with: error.encoded) { violations.append("\(error.name): \(problem)") }
            case .refused(let error):
                if let problem = problem(with: error.encoded) { violations.append("\(error.name): \(problem)") }
            case .truncated:
                break
            }
        }
        return violations
    }

    /// What is wrong with a message the daemon sends, nil when it is one JSON object and one NUL.
    private static func problem(with message: [UInt8]) -> String? {
        guard message.last == 0, message.firstIndex(of: 0) == message.count - 1 else { return "not one message" }
        guard case .object(let members)? = JSONValue.parse(Array(message.dropLast())), case .string? = members["error"] else {
            return "not an error object"
        }
        return nil
    }
}
