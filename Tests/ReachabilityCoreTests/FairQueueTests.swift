import ReachabilityCore
import XCTest

/// Deferred calls served one per caller in turn.
final class FairQueueTests: XCTestCase {
    func testThatCallersAreServedInTurnWhateverTheirBacklog() {
        // Given a caller with five calls waiting, then two other callers with one each
        var queue = FairQueue<Int>()
        for number in 1...5 { queue.append(number, from: "flood") }
        queue.append(100, from: "a")
        queue.append(200, from: "b")
        XCTAssertEqual(queue.count(of: "flood"), 5)

        // When all are served, Then the others come after one of the flood's each
        var served: [String] = []
        while let (caller, element) = queue.next() { served.append("\(caller):\(element)") }
        XCTAssertEqual(served, ["flood:1", "a:100", "b:200", "flood:2", "flood:3", "flood:4", "flood:5"])
        XCTAssertTrue(queue.isEmpty)
    }

    func testThatACallerThatLeftIsDropped() {
        var queue = FairQueue<Int>()
        queue.append(1, from: "x")
        queue.append(2, from: "y")
        queue.append(3, from: "x")
        XCTAssertEqual(queue.removeAll(from: "x"), [1, 3])
        XCTAssertEqual(queue.next()?.element, 2)
        XCTAssertNil(queue.next())
        XCTAssertEqual(queue.removeAll(from: "x"), [])
    }

    func testThatOneConnectionOfASharedTurnCanLeaveAlone() {
        // Given a user's turn holding the calls of two of its connections (odd and even here)
        var queue = FairQueue<Int>()
        for element in 1...4 { queue.append(element, from: "uid 1000") }
        queue.append(100, from: "root")

        // When one connection leaves, only its calls go
        XCTAssertEqual(queue.removeAll(from: "uid 1000") { $0 % 2 == 1 }, [1, 3])
        XCTAssertEqual(queue.count(of: "uid 1000"), 2)
        var served: [String] = []
        while let (caller, element) = queue.next() { served.append("\(caller):\(element)") }
        XCTAssertEqual(served, ["uid 1000:2", "root:100", "uid 1000:4"])

        // and a turn whose calls all go leaves the rotation
        queue.append(5, from: "uid 1000")
        XCTAssertEqual(queue.removeAll(from: "uid 1000") { _ in true }, [5])
        XCTAssertTrue(queue.isEmpty)
    }
}
