// libFuzzer target for the status reducer (issue 6). Built by scripts/fuzz/build.sh together
// with Sources/ReachabilityEngine (with -enable-testing), Sources/ReachabilityCore,
// Sources/RTNetlink, Sources/SystemSupport, the C shim and
// Tests/ReachabilityEngineTests/StatusReducerOracle.swift; not part of the SwiftPM graph.
//
// Input: rtnetlink datagrams with their roles (dump, events, route-lookup answers; see
// ReducerFuzzInput). They go through the parser, the link table and the decision rule as in the
// engine, and every invariant StatusReducerOracle checks must hold: the replay tests check the
// same ones on every `swift test`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStatusReducer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let outcome = StatusReducerOracle.run(ReducerFuzzInput(UnsafeRawBufferPointer(start: data, count: size)))
    if let violation = outcome.violations.first { fatalError("status reducer invariant broken: \(violation)") }
    return 0
}
