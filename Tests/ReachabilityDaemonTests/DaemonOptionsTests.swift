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
            (["--config", "a", "--config", "b"], options { $0.configurationFile = "b" }, #line),
            (["--help"], .help, #line),
            (["-h", "--bogus"], .help, #line),
            (["--version"], .version, #line),
            (["--bogus"], .invalid("Unknown option '--bogus'."), #line),
            (["config"], .invalid("Unexpected argument 'config'."), #line),
            (["--config"], .invalid("Missing value for '--config <path>'."), #line),
            (["--version=1"], .invalid("'--version' takes no value."), #line),
            (["--log-level", "loud"], .invalid("Unknown log level 'loud'; use error, warning, notice, info or debug."), #line),
            (["--receive-buffer", "4095"], .invalid("--receive-buffer must be a number of bytes, at least 4096; got '4095'."), #line),
            (["--receive-buffer=lots"], .invalid("--receive-buffer must be a number of bytes, at least 4096; got 'lots'."), #line),
        ]
        for row in rows {
            // When
            let request = DaemonOptions.parse(row.arguments)

            // Then
            XCTAssertEqual(request, row.request, "\(row.arguments)", line: row.line)
        }
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
