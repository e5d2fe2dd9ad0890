import ReachabilityBus
import XCTest

/// The text of match rules built from their parts (no bus needed).
final class BusSignalMatchTests: XCTestCase {
    func testThatARuleNamesItsPartsInTheSpecificationsSpelling() {
        let cases: [(BusSignalMatch, String)] = [
            (BusSignalMatch(), "type='signal'"),
            (
                BusSignalMatch(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", member: "NameOwnerChanged", arguments: [2: "", 0: "org.example"]),
                "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',member='NameOwnerChanged',arg0='org.example',arg2=''"
            ),
            (
                .propertiesChanged(of: "org.freedesktop.network1.Link", sender: "org.freedesktop.network1", pathNamespace: "/org/freedesktop/network1/link"),
                "type='signal',sender='org.freedesktop.network1',path_namespace='/org/freedesktop/network1/link',"
                    + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='org.freedesktop.network1.Link'"
            ),
            // An apostrophe ends the quotes, is escaped, and reopens them (D-Bus specification).
            (BusSignalMatch(arguments: [0: "it's"]), #"type='signal',arg0='it'\''s'"#),
        ]
        for (match, text) in cases {
            XCTAssertEqual(match.description, text)
        }
    }
}
