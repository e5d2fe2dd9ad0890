// libFuzzer target for the Varlink server's message codec (issue 40). Built by
// scripts/fuzz/build.sh with Sources/ReachabilityCore and
// Tests/ReachabilityCoreTests/VarlinkCallOracle.swift; not part of the SwiftPM graph.
//
// Input: the bytes a peer sends on a connection. Framing and decoding must never trap, and every
// invariant VarlinkCallOracle checks must hold: the replay tests check the same ones on every
// `swift test`.
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVarlinkCall(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let violation = VarlinkCallOracle.violations(of: bytes).first { fatalError("Varlink codec invariant broken: \(violation)") }
    return 0
}
