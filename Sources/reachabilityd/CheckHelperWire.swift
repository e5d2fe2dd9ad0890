import ReachabilityCore

/// What the daemon and its check helper say to each other: one message per `SOCK_SEQPACKET`
/// datagram, a kind byte then its fields (integers little-endian, strings as a 32-bit length and
/// UTF-8). Both ends are the same executable, so the format needs no version.
enum CheckHelperMessage: Equatable {
    /// Daemon → helper: run `request`'s exchange; its answer carries `token`.
    case exchange(token: Int, request: HTTPCheckRequest)
    /// Daemon → helper: look up `host`'s addresses of `family` (RFC 7050's `ipv4only.arpa`).
    case lookUp(token: Int, host: String, family: AddressFamily)
    /// Daemon → helper: abandon `token`'s exchange or lookup (no answer follows).
    case cancel(token: Int)
    /// Helper → daemon: what `token`'s exchange came to, its seconds and the lookup evidence of
    /// its host name (``HTTPCheckClient/start(_:completion:)``'s completion).
    case exchanged(token: Int, outcome: HTTPCheckOutcome, seconds: Double, lookup: NameLookupEvidence?)
    /// Helper → daemon: `token`'s exchange could not run on this host at all (libcurl missing).
    case unavailable(token: Int, why: String)
    /// Helper → daemon: `token`'s lookup found these addresses (none: it failed).
    case lookedUp(token: Int, addresses: [String])

    /// The largest datagram either end reads: a body kept whole (16 KiB) and its texts.
    static let maximumSize = 64 * 1024

    /// Why a datagram is not a message.
    struct Malformed: Error, Equatable {}

    /// The datagram.
    var encoded: [UInt8] {
        var writer = Writer()
        switch self {
        case .exchange(let token, let request):
            writer.byte(1)
            writer.integer(token)
            writer.string(request.url)
            writer.family(request.family)
            writer.string(request.interfaceName)
            writer.double(request.timeoutSeconds)
            writer.optionalString(request.accept)
            writer.optionalString(request.caFile)
        case .lookUp(let token, let host, let family):
            writer.byte(2)
            writer.integer(token)
            writer.string(host)
            writer.family(family)
        case .cancel(let token):
            writer.byte(3)
            writer.integer(token)
        case .exchanged(let token, let outcome, let seconds, let lookup):
            writer.byte(4)
            writer.integer(token)
            switch outcome {
            case .response(let status, let redirect, let body):
                writer.byte(0)
                writer.integer(status)
                writer.optionalString(redirect)
                writer.bytes(body)
            case .failed(let why, let silent):
                writer.byte(silent ? 2 : 1)
                writer.string(why)
            }
            writer.double(seconds)
            switch lookup {
            case nil: writer.byte(0)
            case .answered: writer.byte(1)
            case .failed(let why):
                writer.byte(2)
                writer.string(why)
            }
        case .unavailable(let token, let why):
            writer.byte(5)
            writer.integer(token)
            writer.string(why)
        case .lookedUp(let token, let addresses):
            writer.byte(6)
            writer.integer(token)
            writer.integer(addresses.count)
            for address in addresses { writer.string(address) }
        }
        return writer.output
    }

    /// The message in `datagram`.
    ///
    /// - Throws: ``Malformed`` for anything else (an unknown kind, a short field, bytes left over).
    init(decoding datagram: some Collection<UInt8>) throws(Malformed) {
        var reader = Reader(input: Array(datagram))
        switch try reader.byte() {
        case 1:
            let token = try reader.integer()
            let url = try reader.string(), family = try reader.family(), interface = try reader.string()
            let timeout = try reader.double(), accept = try reader.optionalString(), caFile = try reader.optionalString()
            self = .exchange(token: token, request: HTTPCheckRequest(
                url: url, family: family, interfaceName: interface, timeoutSeconds: timeout, accept: accept, caFile: caFile))
        case 2:
            self = .lookUp(token: try reader.integer(), host: try reader.string(), family: try reader.family())
        case 3:
            self = .cancel(token: try reader.integer())
        case 4:
            let token = try reader.integer()
            let outcome: HTTPCheckOutcome
            switch try reader.byte() {
            case 0: outcome = .response(status: try reader.integer(), redirect: try reader.optionalString(), body: try reader.bytes())
            case let kind where kind == 1 || kind == 2: outcome = .failed(try reader.string(), silent: kind == 2)
            default: throw Malformed()
            }
            let seconds = try reader.double()
            let lookup: NameLookupEvidence?
            switch try reader.byte() {
            case 0: lookup = nil
            case 1: lookup = .answered
            case 2: lookup = .failed(try reader.string())
            default: throw Malformed()
            }
            self = .exchanged(token: token, outcome: outcome, seconds: seconds, lookup: lookup)
        case 5:
            self = .unavailable(token: try reader.integer(), why: try reader.string())
        case 6:
            let token = try reader.integer()
            let count = try reader.integer()
            guard (0...1024).contains(count) else { throw Malformed() }
            var addresses: [String] = []
            for _ in 0..<count { addresses.append(try reader.string()) }
            self = .lookedUp(token: token, addresses: addresses)
        default:
            throw Malformed()
        }
        guard reader.isAtEnd else { throw Malformed() }
    }

    /// Appends fields.
    private struct Writer {
        var output: [UInt8] = []

        mutating func byte(_ value: UInt8) { output.append(value) }
        mutating func integer(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { output += $0 } }
        mutating func double(_ value: Double) { withUnsafeBytes(of: value.bitPattern.littleEndian) { output += $0 } }
        mutating func bytes(_ value: [UInt8]) {
            withUnsafeBytes(of: UInt32(value.count).littleEndian) { output += $0 }
            output += value
        }
        mutating func string(_ value: String) { bytes(Array(value.utf8)) }
        mutating func optionalString(_ value: String?) {
            byte(value == nil ? 0 : 1)
            if let value { string(value) }
        }
        mutating func family(_ value: AddressFamily) { byte(value == .ipv6 ? 6 : 4) }
    }

    /// Takes fields in order.
    private struct Reader {
        let input: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == input.count }

        mutating func take(_ count: Int) throws(Malformed) -> ArraySlice<UInt8> {
            guard count >= 0, input.count - offset >= count else { throw Malformed() }
            defer { offset += count }
            return input[offset..<offset + count]
        }

        mutating func byte() throws(Malformed) -> UInt8 { try take(1).first! }
        mutating func unsigned(_ count: Int) throws(Malformed) -> UInt64 {
            try take(count).reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        mutating func integer() throws(Malformed) -> Int { Int(Int64(bitPattern: try unsigned(8))) }
        mutating func double() throws(Malformed) -> Double { Double(bitPattern: try unsigned(8)) }
        mutating func bytes() throws(Malformed) -> [UInt8] { Array(try take(Int(try unsigned(4)))) }
        mutating func string() throws(Malformed) -> String { String(decoding: try bytes(), as: UTF8.self) }
        mutating func optionalString() throws(Malformed) -> String? {
            switch try byte() {
            case 0: return nil
            case 1: return try string()
            default: throw Malformed()
            }
        }
        mutating func family() throws(Malformed) -> AddressFamily {
            switch try byte() {
            case 4: return .ipv4
            case 6: return .ipv6
            default: throw Malformed()
            }
        }
    }
}
