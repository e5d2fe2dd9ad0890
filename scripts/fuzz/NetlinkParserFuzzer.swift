// libFuzzer target for the rtnetlink parser (issue 6). Built by scripts/fuzz/build.sh together
// with Sources/RTNetlink, Sources/SystemSupport and the C shim; not part of the SwiftPM graph.
//
// Input: one netlink datagram. The parser must never crash, and what it returns must hold
// together: a message it accepts fits in the datagram, messages come in order, and a framing
// error ends the datagram.
import RTNetlink

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNetlinkParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let results = NetlinkParser.parse(datagram: bytes)
    var consumed = 0
    for (position, result) in results.enumerated() {
        switch result {
        case .success(let message):
            let length = Int(message.header.length)
            precondition(length >= 16 && consumed + length <= size, "accepted a message beyond the datagram")
            consumed += (length + 3) & ~3
        case .failure(let error):
            switch error {
            case .truncatedHeader, .invalidMessageLength:
                precondition(position == results.count - 1, "parsing went on after a framing error")
            default:
                break
            }
            _ = error.description
        }
    }
    // Parsing is pure: the same bytes give the same answer.
    precondition(NetlinkParser.parse(datagram: bytes) == results, "parse is not deterministic")
    return 0
}
