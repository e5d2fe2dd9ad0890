import ReachabilityEngine
import SystemSupport
import XCTest

@testable import reachabilityd

/// `reachabilityd`'s command line: every option, both spellings, and each kind of mistake.
final class DaemonOptionsTests: XCTestCase {
    func testThatEachCommandLineGivesItsRequest() {
        func options(_ change: (inout DaemonOptions) -> Void) -> DaemonOptions.Request {
            var options = DaemonOptions()
            change(&options)
            return .run(options)
        }
        let rows: [(arguments: [String], request: DaemonOptions.Request, line: UInt)] = [
            ([], options { _ in }, #line),
            (["--log-level", "debug"], options { $0.logLevel = .debug }, #line),
            (["--log-level=warning"], options { $0.logLevel = .warning }, #line),
            (["--config", "/tmp/r.conf"], options { $0.configurationFile = "/tmp/r.conf" }, #line),
            (["--config=/tmp/a=b.conf"], options { $0.configurationFile = "/tmp/a=b.conf" }, #line),
            (["--sysfs-root", "/tmp/sys"], options { $0.sysfsRoot = "/tmp/sys" }, #line),
            (["--receive-buffer", "4096"], options { $0.receiveBufferBytes = 4096 }, #line),
            (["--remove-metrics-textfile", "--config", "/tmp/r.conf"], options { $0.removesMetricsTextfile = true; $0.configurationFile = "/tmp/r.conf" }, #line),
            (["--networkd-leases", "/tmp/leases"], options { $0.networkdLeaseDirectory = "/tmp/leases" }, #line),
            (["--config", "a", "--config", "b"], options { $0.configurationFile = "b" }, #line),
            (["--help"], .help, #line),
            (["-h", "--bogus"], .help, #line),
            (["--version"], .version, #line),
            (["--bogus"], .invalid("Unknown option '--bogus'."), #line),
            (["config"], .invalid("Unexpected argument 'config'."), #line),
            (["--config"], .invalid("Missing value for '--config <path>'."), #line),
            (["--version=1"], .invalid("'--version' takes no value."), #line),
            (["--log-level", "loud"], .invalid("Unknown log level 'loud'; use error, warning, notice, info or debug."), #line),
            (["--receive-buffer", "2147483647"], options { $0.receiveBufferBytes = .max }, #line),
            (["--receive-buffer", "4095"], .invalid("The value '4095' is invalid for '--receive-buffer': give a whole number from 4096 to 2147483647."), #line),
            (["--receive-buffer=lots"], .invalid("The value 'lots' is invalid for '--receive-buffer': give a whole number from 4096 to 2147483647."), #line),
            (["--receive-buffer", "2147483648"], .invalid("The value '2147483648' is invalid for '--receive-buffer': give a whole number from 4096 to 2147483647."), #line),
            (["--receive-buffer", "1e19"], .invalid("The value '1e19' is invalid for '--receive-buffer': give a whole number from 4096 to 2147483647."), #line),
        ]
        for row in rows {
            // When
            let request = DaemonOptions.parse(row.arguments)

            // Then
            XCTAssertEqual(request, row.request, "\(row.arguments)", line: row.line)
        }
    }

    func testThatTheGrammarsNumbersRefuseWhatWouldOverflowTrapOrMeanNothing() {
        // Given an option taking seconds, and one taking a whole number from 1 to 10
        let spec = CommandSpec(program: "test", name: "", abstract: "", discussion: "",
                               options: [.value("timeout", "seconds", ""), .value("count", "number", "")])
        let secondsRows: [(text: String, seconds: Double?, line: UInt)] = [
            ("0", 0, #line), ("-0", 0, #line), ("2.5", 2.5, #line), ("1e3", 1000, #line),
            ("4294967295", 4294967295, #line),
            // Swift's Duration traps from 2^63 s, Int64 milliseconds from 9.2e15 s: refused well before
            ("4294967296", nil, #line), ("9.2e18", nil, #line), ("1e19", nil, #line), ("1e400", nil, #line),
            ("inf", nil, #line), ("-inf", nil, #line), ("nan", nil, #line), ("-1", nil, #line), ("-1e-9", nil, #line),
            ("", nil, #line), ("5s", nil, #line), ("ten", nil, #line),
        ]
        for row in secondsRows {
            // When
            let parsed = try? XCTUnwrap(spec.parse(["--timeout", row.text]))
            let seconds = try? parsed?.seconds("timeout", default: 30)

            // Then
            XCTAssertEqual(seconds, row.seconds, "'\(row.text)'", line: row.line)
            if let seconds { XCTAssertEqual(seconds.sign, .plus, "'\(row.text)'", line: row.line) }
        }
        let integerRows: [(text: String, number: Int64?, line: UInt)] = [
            ("1", 1, #line), ("10", 10, #line), ("+7", 7, #line),
            ("0", nil, #line), ("11", nil, #line), ("-1", nil, #line), ("9223372036854775808", nil, #line),
            ("1e1", nil, #line), ("2.0", nil, #line), ("", nil, #line),
        ]
        for row in integerRows {
            let parsed = try? XCTUnwrap(spec.parse(["--count=\(row.text)"]))
            XCTAssertEqual(try? parsed?.integer("count", in: 1...10), row.number, "'\(row.text)'", line: row.line)
        }
        // and an absent option is its default, or nil
        let none = try? XCTUnwrap(spec.parse([]))
        XCTAssertEqual(try? none?.seconds("timeout", default: 30), 30)
        XCTAssertNoThrow(XCTAssertNil(try none?.integer("count", in: 1...10)))
    }

    func testThatTheDefaultsAreTheDocumentedOnes() {
        // Given, When
        let options = DaemonOptions()

        // Then
        XCTAssertEqual(options.configurationFile, ConfigurationFiles.defaultMainFile)
        XCTAssertEqual(options.configurationFile, "/etc/reachabilityd/reachabilityd.conf")
        XCTAssertEqual(options.sysfsRoot, "/sys")
        XCTAssertEqual(options.receiveBufferBytes, 8 * 1024 * 1024)
        XCTAssertEqual(options.logLevel, .info)
        XCTAssertTrue(DaemonOptions.help.contains("(default: \(options.receiveBufferBytes))"), "--help shows the buffer's default")
    }
}
