#if canImport(Glibc)
import Glibc
#endif
import CProcessShims
import RTNetlink
import ReachabilityCore
import XCTest

@testable import reachabilityd

/// The check helper's two pure parts: its messages (each kind through the codec and back, and
/// what a datagram must not be) and its seccomp filter (run by a classic-BPF interpreter on the
/// system calls it must allow, refuse or kill for).
final class CheckHelperWireAndSandboxTests: XCTestCase {
    func testEachMessageComesBackAsItWasSent() throws {
        let messages: [CheckHelperMessage] = [
            .exchange(token: 1, request: HTTPCheckRequest(url: "http://check.example/", family: .ipv4, interfaceName: "eth0", timeoutSeconds: 10)),
            .exchange(token: 2, request: HTTPCheckRequest(
                url: "https://[2001:db8::1]/api", family: .ipv6, interfaceName: "wlan0", timeoutSeconds: 0.5,
                accept: "application/captive+json", caFile: "/etc/ca.pem")),
            .lookUp(token: 3, host: "ipv4only.arpa", family: .ipv6),
            .cancel(token: Int.max),
            .exchanged(token: 4, outcome: .response(status: 204, redirect: nil, body: []), seconds: 0.012, lookup: .answered),
            .exchanged(token: 5, outcome: .response(status: 302, redirect: "http://portal/", body: Array("<html>é".utf8)), seconds: 1, lookup: nil),
            .exchanged(token: 6, outcome: .failed("Timeout was reached", silent: true), seconds: 3, lookup: .failed("Temporary failure in name resolution")),
            .exchanged(token: 7, outcome: .failed("Connection refused"), seconds: 0, lookup: nil),
            .unavailable(token: 8, why: "libcurl could not be loaded: libcurl.so.4: cannot open shared object file"),
            .lookedUp(token: 9, addresses: ["64:ff9b::c000:aa", "64:ff9b::c000:ab"]),
            .lookedUp(token: 10, addresses: []),
        ]
        for message in messages {
            XCTAssertEqual(try CheckHelperMessage(decoding: message.encoded), message)
            XCTAssertLessThan(message.encoded.count, CheckHelperMessage.maximumSize)
        }
        let body = [UInt8](repeating: 0x41, count: 16 * 1024)
        let largest = CheckHelperMessage.exchanged(token: 1, outcome: .response(status: 200, redirect: String(repeating: "r", count: 8192), body: body), seconds: 1, lookup: .answered)
        XCTAssertLessThan(largest.encoded.count, CheckHelperMessage.maximumSize)
    }

    func testADatagramThatIsNoMessageIsRefused() {
        let valid = CheckHelperMessage.cancel(token: 1).encoded
        let datagrams: [[UInt8]] = [[], [0], [99] + valid.dropFirst(), Array(valid.dropLast()), valid + [0], [6] + Array(repeating: 0xff, count: 16)]
        for datagram in datagrams {
            XCTAssertThrowsError(try CheckHelperMessage(decoding: datagram), "\(datagram)")
        }
    }

    func testAnAnswerNoHonestHelperSendsIsRefused() {
        // Given answers a compromised helper could forge, each well framed
        let response = HTTPCheckOutcome.response(status: 204, redirect: nil, body: [])
        func exchanged(token: Int = 1, _ outcome: HTTPCheckOutcome = response, seconds: Double = 0.1, lookup: NameLookupEvidence? = nil) -> [UInt8] {
            CheckHelperMessage.exchanged(token: token, outcome: outcome, seconds: seconds, lookup: lookup).encoded
        }
        /// `text`'s UTF-8 with every "~" made the byte `byte`.
        func unavailable(_ text: String, byte: UInt8) -> [UInt8] {
            CheckHelperMessage.unavailable(token: 1, why: text).encoded.map { $0 == UInt8(ascii: "~") ? byte : $0 }
        }
        let rows: [(name: String, datagram: [UInt8], line: UInt)] = [
            ("NaN seconds", exchanged(seconds: .nan), #line),
            ("infinite seconds", exchanged(seconds: .infinity), #line),
            ("negative seconds", exchanged(seconds: -1), #line),
            ("seconds beyond any exchange", exchanged(seconds: 1e9), #line),
            ("token 0", exchanged(token: 0), #line),
            ("a negative token", exchanged(token: -5), #line),
            ("status 0", exchanged(.response(status: 0, redirect: nil, body: [])), #line),
            ("status 1000", exchanged(.response(status: 1000, redirect: nil, body: [])), #line),
            ("a javascript: redirection", exchanged(.response(status: 302, redirect: "javascript:alert(1)", body: [])), #line),
            ("a redirection without a scheme", exchanged(.response(status: 302, redirect: "/portal", body: [])), #line),
            ("a redirection over the URL limit", exchanged(.response(status: 302, redirect: "http://" + String(repeating: "a", count: 9000), body: [])), #line),
            ("a body over the limit", exchanged(.response(status: 200, redirect: nil, body: Array(repeating: 0x41, count: HTTPCheckOutcome.bodyLimit + 1))), #line),
            ("a failure text with a newline", exchanged(.failed("Timeout\nforged log line")), #line),
            ("a failure text over the limit", exchanged(.failed(String(repeating: "x", count: 5000))), #line),
            ("a lookup failure with a NUL", exchanged(lookup: .failed("a\u{0}b")), #line),
            ("invalid UTF-8", unavailable("libcurl ~ missing", byte: 0xFF), #line),
            ("a lone continuation byte", unavailable("~", byte: 0x80), #line),
            ("an address that is none", CheckHelperMessage.lookedUp(token: 1, addresses: ["192.0.2.1", "not an address"]).encoded, #line),
        ]

        for row in rows {
            // When the daemon decodes it
            // Then it is refused, not delivered
            XCTAssertThrowsError(try CheckHelperMessage(decoding: row.datagram), row.name, line: row.line)
        }
    }

    func testWhatTheHelperSendsIsAlwaysAccepted() throws {
        // Given outcomes a server can make libcurl report, and the answers the helper sends
        let rows: [(outcome: HTTPCheckOutcome, seconds: Double, sent: HTTPCheckOutcome, sentSeconds: Double, line: UInt)] = [
            (.response(status: 302, redirect: "ftp://portal/", body: []), 1, .response(status: 302, redirect: nil, body: []), 1, #line),
            (.response(status: 302, redirect: "HTTPS://portal/", body: []), 1, .response(status: 302, redirect: "HTTPS://portal/", body: []), 1, #line),
            (.failed("bad\r\nline"), .nan, .failed("bad\u{FFFD}line"), 0, #line),
            (.failed(String(repeating: "é", count: 3000)), 1e9, .failed(String(repeating: "é", count: 2048)), 3600, #line),
            (.response(status: 42, redirect: nil, body: []), -1, .failed("the server answered status 42, not an HTTP status code"), 0, #line),
        ]

        for row in rows {
            // When the helper answers with it
            let answer = CheckHelperMessage.answer(token: 1, outcome: row.outcome, seconds: row.seconds, lookup: .failed("x\u{0}"))

            // Then the daemon accepts it, the fields made valid
            XCTAssertEqual(
                try CheckHelperMessage(decoding: answer.encoded),
                .exchanged(token: 1, outcome: row.sent, seconds: row.sentSeconds, lookup: .failed("x\u{FFFD}")), line: row.line)
        }
    }

    func testTheFilterAllowsWhatTheHelperNeedsAndRefusesTheRest() throws {
        let program = try XCTUnwrap(CheckHelperSandbox.program())
        XCTAssertLessThanOrEqual(program.count, Int(BPF_MAXINSNS))
        let architecture = CReachProcess_auditArchitecture()
        let allow = UInt32(SECCOMP_RET_ALLOW), refuse = UInt32(SECCOMP_RET_ERRNO) | UInt32(EPERM), kill = UInt32(SECCOMP_RET_KILL_PROCESS)
        let openat = Int(CReachProcess_syscallOpenat()), socket = Int(CReachProcess_syscallSocket())
        // <asm/unistd.h>'s socketpair (Swift does not import SYS_*).
        #if arch(x86_64)
        let socketpair = 53
        #elseif arch(arm64)
        let socketpair = 199
        #endif
        let stream = UInt64(SOCK_STREAM.rawValue), datagram = UInt64(SOCK_DGRAM.rawValue), flags = UInt64(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        // <asm/unistd.h>'s numbers (Swift does not import SYS_*).
        #if arch(x86_64)
        let (read, connect, execve, unlinkat, ptrace, kill_) = (0, 42, 59, 263, 101, 62)
        #elseif arch(arm64)
        let (read, connect, execve, unlinkat, ptrace, kill_) = (63, 203, 221, 35, 117, 129)
        #endif
        let cases: [(String, Int, [UInt64], UInt32)] = [
            ("read", read, [], allow),
            ("connect", connect, [], allow),
            ("socket(AF_INET)", socket, [UInt64(AF_INET)], allow),
            ("socket(AF_INET6)", socket, [UInt64(AF_INET6)], allow),
            ("socket(AF_UNIX)", socket, [UInt64(AF_UNIX)], refuse),
            ("socketpair(AF_UNIX, SOCK_STREAM)", socketpair, [UInt64(AF_UNIX), stream], allow),
            ("socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC)", socketpair, [UInt64(AF_UNIX), stream | flags], allow),
            ("socketpair(AF_UNIX, SOCK_DGRAM)", socketpair, [UInt64(AF_UNIX), datagram], refuse),
            ("socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC)", socketpair, [UInt64(AF_UNIX), UInt64(SOCK_SEQPACKET.rawValue) | flags], refuse),
            ("socket(AF_NETLINK)", socket, [UInt64(AF_NETLINK)], refuse),
            ("socket(AF_PACKET)", socket, [UInt64(AF_PACKET)], refuse),
            ("openat(O_RDONLY)", openat, [UInt64(bitPattern: Int64(AT_FDCWD)), 0, UInt64(O_RDONLY | O_CLOEXEC)], allow),
            ("openat(O_WRONLY)", openat, [0, 0, UInt64(O_WRONLY)], refuse),
            ("openat(O_RDWR)", openat, [0, 0, UInt64(O_RDWR)], refuse),
            ("openat(O_CREAT)", openat, [0, 0, UInt64(O_CREAT)], refuse),
            ("execve", execve, [], refuse),
            ("unlinkat", unlinkat, [], refuse),
            ("ptrace", ptrace, [], refuse),
            ("kill", kill_, [], refuse),
            ("x32 read", read | Int(CReachProcess_x32SyscallBit()), [], CReachProcess_x32SyscallBit() == 0 ? allow : kill),
        ]
        for (name, number, arguments, expected) in cases {
            XCTAssertEqual(Self.run(program, number: number, architecture: architecture, arguments: arguments), expected, name)
        }
        XCTAssertEqual(Self.run(program, number: read, architecture: 0x4000_0003, arguments: []), kill, "another architecture")
    }

    /// What `program` returns for a `struct seccomp_data` of this call: the instructions the
    /// filter uses (word loads, `and`, `jeq`/`jge`/`ja`, `ret`) run as the kernel runs them.
    private static func run(_ program: [BPFInstruction], number: Int, architecture: UInt32, arguments: [UInt64]) -> UInt32? {
        var data = [UInt8](repeating: 0, count: 64)
        func put(_ value: UInt32, at offset: Int) { withUnsafeBytes(of: value) { data.replaceSubrange(offset..<offset + 4, with: $0) } }
        put(UInt32(truncatingIfNeeded: number), at: 0)
        put(architecture, at: 4)
        for (index, argument) in arguments.enumerated() {
            withUnsafeBytes(of: argument) { data.replaceSubrange(16 + 8 * index..<24 + 8 * index, with: $0) }
        }
        var accumulator: UInt32 = 0
        var pc = 0
        while pc < program.count {
            let instruction = program[pc]
            pc += 1
            switch Int32(instruction.code) {
            case BPF_LD | BPF_W | BPF_ABS:
                accumulator = data[Int(instruction.constant)..<Int(instruction.constant) + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            case BPF_ALU | BPF_AND | BPF_K: accumulator &= instruction.constant
            case BPF_JMP | BPF_JA: pc += Int(instruction.constant)
            case BPF_JMP | BPF_JEQ | BPF_K: pc += Int(accumulator == instruction.constant ? instruction.jumpIfTrue : instruction.jumpIfFalse)
            case BPF_JMP | BPF_JGE | BPF_K: pc += Int(accumulator >= instruction.constant ? instruction.jumpIfTrue : instruction.jumpIfFalse)
            case BPF_RET | BPF_K: return instruction.constant
            default: return nil
            }
        }
        return nil
    }
}
