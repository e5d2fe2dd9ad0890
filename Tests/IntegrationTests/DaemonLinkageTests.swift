import Foundation
import TestSupport
import XCTest

/// What the daemon's executable uses of the Swift runtime (docs/benchmarks.md, "Private memory").
final class DaemonLinkageTests: XCTestCase {
    func testTheDaemonCallsNothingOfTheConcurrencyRuntimeOrStringProcessing() throws {
        // The tests' debug build links the runtime's libraries dynamically, so whatever the
        // daemon's code calls in one is an undefined symbol of its executable. In the shipped
        // static build, one such call links the whole library in: 0.3 MB of code for the
        // concurrency runtime, 1 MB for _StringProcessing and _RegexParser, their data and
        // relocated pointers resident in every daemon.
        let daemon = try TestPaths.daemonBinary()
        let undefined = Set(try Self.symbols(["-D", "--undefined-only", daemon]))
        let resolved = try Command.run("ldd", [daemon]).check().standardOutput
        for library in ["libswift_Concurrency.so", "libswift_StringProcessing.so", "libswift_RegexParser.so"] {
            // "\tlibswift_Concurrency.so => /path/libswift_Concurrency.so (0x...)"; a library the
            // executable does not even name has nothing it calls.
            guard let line = resolved.split(separator: "\n").first(where: { $0.contains("\(library) => /") }),
                  let path = line.split(separator: " ").first(where: { $0.hasPrefix("/") }) else { continue }
            let called = undefined.intersection(try Self.symbols(["-D", "--defined-only", String(path)]))
            XCTAssertEqual(called.sorted(), [], "reachabilityd calls these functions of \(library)")
        }
    }

    /// The names `nm ARGUMENTS` lists (its last column).
    private static func symbols(_ arguments: [String]) throws -> [String] {
        try Command.run("nm", arguments).check().standardOutput.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
    }
}
