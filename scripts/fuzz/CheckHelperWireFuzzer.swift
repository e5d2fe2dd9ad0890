// libFuzzer target for the check helper's messages (issue 38 item 15). Built by
// scripts/fuzz/build.sh together with Sources/reachabilityd/CheckHelperMessage.swift (as a module of
// its own, with -enable-testing), Sources/ReachabilityCore, Sources/NetworkTypes and
// Tests/ReachabilityDaemonTests/CheckHelperWireOracle.swift; not part of the SwiftPM graph.
//
// Input: one datagram, as a compromised helper could send it. Decoding must never trap, and every
// invariant CheckHelperWireOracle checks must hold: the replay tests check the same ones on
// every `swift test`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheckHelperWire(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let datagram = Array(UnsafeBufferPointer(start: data, count: size))
    if let violation = CheckHelperWireOracle.violations(of: datagram).first { fatalError("check helper message invariant broken: \(violation)") }
    return 0
}
