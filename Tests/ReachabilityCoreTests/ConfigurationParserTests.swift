import ReachabilityCore
import XCTest

/// Parsing `reachabilityd.conf` and its drop-ins.
final class ConfigurationParserTests: XCTestCase {
    func testThatAFullConfigurationParses() throws {
        // Given
        let text = """
            # comment
            ; another comment
            [Reachability]
            IgnoreInterfaces=docker* tailscale0
            IgnoreInterfaces=zt*
            Transport=usb*:wwan enx*:ethernet
            Metered=wifi:yes hotspot*:no
            DownDelaySec=500ms
            """

        // When
        let configuration = try ConfigurationParser.parse([("/etc/reachabilityd/reachabilityd.conf", text)])

        // Then
        XCTAssertEqual(configuration.ignoreInterfaces, ["docker*", "tailscale0", "zt*"])
        XCTAssertEqual(configuration.transportOverrides, [InterfaceRule(pattern: "usb*", value: .wwan), InterfaceRule(pattern: "enx*", value: .ethernet)])
        XCTAssertEqual(configuration.meteredTransports, [.wifi: true])
        XCTAssertEqual(configuration.meteredInterfaces, [InterfaceRule(pattern: "hotspot*", value: false)])
        XCTAssertEqual(configuration.downDelaySeconds, 0.5, accuracy: 1e-9)
    }

    func testThatLaterFilesWinAndEmptyAssignmentsReset() throws {
        // Given
        let main = "[Reachability]\nIgnoreInterfaces=a*\nDownDelaySec=1\n"
        let dropIn = "[Reachability]\nIgnoreInterfaces=\nIgnoreInterfaces=b*\nDownDelaySec=2s\n"

        // When
        let configuration = try ConfigurationParser.parse([("main.conf", main), ("main.conf.d/10-local.conf", dropIn)])

        // Then
        XCTAssertEqual(configuration.ignoreInterfaces, ["b*"])
        XCTAssertEqual(configuration.downDelaySeconds, 2)
    }

    func testThatCRLFLineEndingsAreAccepted() throws {
        // Given a file written with CRLF line endings
        let text = "# comment\r\n[Reachability]\r\nIgnoreInterfaces=zt*\r\nDownDelaySec=2\r\n"

        // When
        let configuration = try ConfigurationParser.parse([("crlf.conf", text)])

        // Then
        XCTAssertEqual(configuration.ignoreInterfaces, ["zt*"])
        XCTAssertEqual(configuration.downDelaySeconds, 2)
    }

    func testThatContainerInterfacesExtendTheBuiltInListUntilAnEmptyAssignmentClearsIt() throws {
        let rows: [(name: String, text: String, expected: [String], line: UInt)] = [
            ("not set: the built-in list", "[Reachability]\n", ContainerInterfaces.defaultPatterns, #line),
            ("added to", "[Reachability]\nContainerInterfaces=lxcbr* podman*\n", ContainerInterfaces.defaultPatterns + ["lxcbr*", "podman*"], #line),
            ("cleared", "[Reachability]\nContainerInterfaces=\n", [], #line),
            ("cleared, then set", "[Reachability]\nContainerInterfaces=\nContainerInterfaces=docker0 veth*\n", ["docker0", "veth*"], #line),
        ]
        for row in rows {
            // When
            let configuration = try ConfigurationParser.parse([("reachabilityd.conf", row.text)])

            // Then
            XCTAssertEqual(configuration.containerInterfaces, row.expected, row.name, line: row.line)
            XCTAssertTrue(configuration.summary.contains("ContainerInterfaces=\(row.expected.joined(separator: " "))"), row.name, line: row.line)
        }
    }

    func testThatEveryBadLineIsReportedWithFileAndLine() {
        // Given
        let rows: [(String, String)] = [
            ("[Reachability]\nTransport=usb0\n", "f.conf:2: Transport= expects GLOB:TRANSPORT"),
            ("[Reachability]\nTransport=usb0:satellite\n", "f.conf:2: Transport= expects GLOB:TRANSPORT"),
            ("[Reachability]\nMetered=wifi:maybe\n", "f.conf:2: Metered= expects"),
            ("[Reachability]\nDownDelaySec=-1\n", "f.conf:2: DownDelaySec= expects"),
            ("[Reachability]\nDownDelaySec=soon\n", "f.conf:2: DownDelaySec= expects"),
            ("[Reachability]\nIgnoreInterface=eth0\n", "f.conf:2: unknown setting \"IgnoreInterface\""),
            ("IgnoreInterfaces=eth0\n", "f.conf:1: assignment outside section"),
            ("[Network]\n", "f.conf:1: unknown section [Network]"),
            ("[Metrics]\nTextfileDirectory=relative/dir\n", "f.conf:2: TextfileDirectory= expects an absolute path"),
            ("[Metrics]\nDirectory=/x\n", "f.conf:2: unknown setting \"Directory\" in [Metrics]"),
            ("[Reachability\n", "f.conf:1: malformed section header"),
            ("[Reachability]\njust words\n", "f.conf:2: expected Key=value"),
        ]
        for (text, expected) in rows {
            // When
            XCTAssertThrowsError(try ConfigurationParser.parse([("f.conf", text)]), text) { error in
                // Then
                let diagnostics = (error as? InvalidConfiguration)?.diagnostics ?? []
                XCTAssertEqual(diagnostics.count, 1, text)
                XCTAssertTrue(diagnostics.first?.description.hasPrefix(expected) ?? false, "\(diagnostics) for \(text)")
            }
        }
    }

    func testThatMeteredFollowsInterfaceRulesThenTransportRulesThenWWAN() {
        // Given
        let configuration = DaemonConfiguration(
            meteredInterfaces: [InterfaceRule(pattern: "wlan-hotspot*", value: true), InterfaceRule(pattern: "wwan-home", value: false)],
            meteredTransports: [.ethernet: false, .wifi: false]
        )

        // When, Then
        XCTAssertEqual(configuration.meteredSetting(interface: "wlan-hotspot0", transport: .wifi), true)
        XCTAssertEqual(configuration.meteredSetting(interface: "wwan-home", transport: .wwan), false)
        XCTAssertNil(configuration.meteredSetting(interface: "wwan0", transport: .wwan), "no line: MeteredRule asks the others")
        XCTAssertEqual(configuration.meteredSetting(interface: "wlan0", transport: .wifi), false)
        XCTAssertNil(DaemonConfiguration.default.meteredSetting(interface: "eth0", transport: .ethernet))
    }
}
