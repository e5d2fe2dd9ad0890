import ReachabilityCore

/// What the daemon and its check helper say to each other: one message per `SOCK_SEQPACKET`
/// datagram, a kind byte then its fields (integers little-endian, strings as a 32-bit length and
/// UTF-8). Both ends are the same executable, so the format needs no version.
///
/// The helper parses a server's bytes, so the daemon trusts nothing it sends: decoding checks
/// every field against what an honest helper can send (``Malformed`` says which field failed),
/// and the helper makes its answers so before it sends them
/// (``answer(token:outcome:seconds:lookup:)``).
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
    /// The longest duration a message carries: no exchange or lookup lasts as long
    /// (`CheckTimeoutSec=` is at most 300 s; a lookup is given up on after 40 s).
    static let longestSeconds = 3600.0
    /// The most bytes of a URL (the check's, the API's, a redirection's `Location`).
    static let urlLimit = 8 * 1024
    /// The most bytes of any other text (a failure's reason, a host, an interface, a file).
    static let textLimit = 4 * 1024
    /// The most addresses one lookup answers with.
    static let addressLimit = 1024
    /// The status codes an exchange can answer with: three digits (RFC 9110 §15), as libcurl
    /// reads a status line.
    static let statusCodes = 100...999

    /// Why a datagram is not a message: the field, and what was wrong with it.
    struct Malformed: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    /// The helper's answer to an exchange, its fields made what the daemon accepts
    /// (``init(decoding:)``): a redirection that is not http or https, or too long, is dropped
    /// (a verdict ignores it anyway); a status that is not three digits fails the exchange;
    /// texts are cut at their limit and their control characters replaced; seconds are kept
    /// between 0 and ``longestSeconds``.
    static func answer(token: Int, outcome: HTTPCheckOutcome, seconds: Double, lookup: NameLookupEvidence?) -> CheckHelperMessage {
        let sendable: HTTPCheckOutcome
        switch outcome {
        case .response(let status, let redirect, let body):
            let web = redirect.flatMap { isWebURL($0) && $0.utf8.count <= urlLimit && isPlainText($0) ? $0 : nil }
            sendable = statusCodes.contains(status)
                ? .response(status: status, redirect: web, body: Array(body.prefix(HTTPCheckOutcome.bodyLimit)))
                : .failed("the server answered status \(status), not an HTTP status code")
        case .failed(let why, let silent):
            sendable = .failed(plainText(why), silent: silent)
        }
        let duration = seconds.isNaN ? 0 : min(max(seconds, 0), longestSeconds)
        let evidence = lookup.map { lookup -> NameLookupEvidence in
            if case .failed(let why) = lookup { return .failed(plainText(why)) }
            return lookup
        }
        return .exchanged(token: token, outcome: sendable, seconds: duration, lookup: evidence)
    }

    /// `text` cut at ``textLimit`` bytes (on a character), its control characters replaced.
    static func plainText(_ text: String) -> String {
        var result = ""
        for character in text {
            let replaced: Character = character.unicodeScalars.contains(where: isControl) ? "\u{FFFD}" : character
            guard result.utf8.count + replaced.utf8.count <= textLimit else { break }
            result.append(replaced)
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    private static func isPlainText(_ text: String) -> Bool {
        !text.unicodeScalars.contains(where: isControl)
    }

    private static func isWebURL(_ url: String) -> Bool {
        ["http", "https"].contains(URLScheme.of(url))
    }

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

    /// The message in `datagram`, every field checked.
    ///
    /// - Throws: ``Malformed`` for anything else: an unknown kind, a short field, bytes left
    ///   over; a token that is not positive; a duration that is not finite, negative or longer
    ///   than ``longestSeconds``; a text that is not UTF-8, holds a control character or is over
    ///   its limit; a URL that is not http or https; a status that is not three digits; a body
    ///   over ``HTTPCheckOutcome/bodyLimit``; an address that is not one.
    init(decoding datagram: some Collection<UInt8>) throws(Malformed) {
        var reader = Reader(input: Array(datagram))
        switch try reader.byte("kind") {
        case 1:
            let token = try reader.token()
            let url = try reader.url("url"), family = try reader.family(), interface = try reader.text("interface")
            let timeout = try reader.seconds("timeout"), accept = try reader.optionalText("accept"), caFile = try reader.optionalText("CA file")
            self = .exchange(token: token, request: HTTPCheckRequest(
                url: url, family: family, interfaceName: interface, timeoutSeconds: timeout, accept: accept, caFile: caFile))
        case 2:
            self = .lookUp(token: try reader.token(), host: try reader.text("host"), family: try reader.family())
        case 3:
            self = .cancel(token: try reader.token())
        case 4:
            let token = try reader.token()
            let outcome: HTTPCheckOutcome
            switch try reader.byte("outcome") {
            case 0:
                let status = try reader.integer("status")
                guard Self.statusCodes.contains(status) else { throw Malformed(description: "status \(status) is not three digits") }
                let redirect = try reader.optional("redirect") { (reader: inout Reader) throws(Malformed) in try reader.url("redirect") }
                outcome = .response(status: status, redirect: redirect, body: try reader.bytes("body", limit: HTTPCheckOutcome.bodyLimit))
            case let kind where kind == 1 || kind == 2: outcome = .failed(try reader.text("failure"), silent: kind == 2)
            case let kind: throw Malformed(description: "outcome \(kind) is none")
            }
            let seconds = try reader.seconds("seconds")
            let lookup: NameLookupEvidence?
            switch try reader.byte("lookup") {
            case 0: lookup = nil
            case 1: lookup = .answered
            case 2: lookup = .failed(try reader.text("lookup failure"))
            case let kind: throw Malformed(description: "lookup \(kind) is none")
            }
            self = .exchanged(token: token, outcome: outcome, seconds: seconds, lookup: lookup)
        case 5:
            self = .unavailable(token: try reader.token(), why: try reader.text("unavailability"))
        case 6:
            let token = try reader.token()
            let count = try reader.integer("address count")
            guard (0...Self.addressLimit).contains(count) else { throw Malformed(description: "address count \(count) is over \(Self.addressLimit)") }
            var addresses: [String] = []
            for _ in 0..<count {
                let address = try reader.text("address")
                guard IPAddress(address) != nil else { throw Malformed(description: "address \"\(address)\" is none") }
                addresses.append(address)
            }
            self = .lookedUp(token: token, addresses: addresses)
        case let kind:
            throw Malformed(description: "kind \(kind) is none")
        }
        guard reader.isAtEnd else { throw Malformed(description: "bytes are left over") }
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

    /// Takes fields in order, each checked.
    private struct Reader {
        let input: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == input.count }

        mutating func take(_ count: Int, _ field: String) throws(Malformed) -> ArraySlice<UInt8> {
            guard count >= 0, input.count - offset >= count else { throw Malformed(description: "\(field) is cut short") }
            defer { offset += count }
            return input[offset..<offset + count]
        }

        mutating func byte(_ field: String) throws(Malformed) -> UInt8 { try take(1, field).first! }
        mutating func unsigned(_ count: Int, _ field: String) throws(Malformed) -> UInt64 {
            try take(count, field).reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        mutating func integer(_ field: String) throws(Malformed) -> Int { Int(Int64(bitPattern: try unsigned(8, field))) }
        mutating func token() throws(Malformed) -> Int {
            let token = try integer("token")
            guard token > 0 else { throw Malformed(description: "token \(token) is not positive") }
            return token
        }
        /// A duration: finite, from 0 to ``CheckHelperMessage/longestSeconds``.
        mutating func seconds(_ field: String) throws(Malformed) -> Double {
            let seconds = Double(bitPattern: try unsigned(8, field))
            guard seconds.isFinite, (0...CheckHelperMessage.longestSeconds).contains(seconds) else {
                throw Malformed(description: "\(field) \(seconds) is not a duration from 0 to \(Int(CheckHelperMessage.longestSeconds)) s")
            }
            return seconds
        }
        mutating func bytes(_ field: String, limit: Int) throws(Malformed) -> [UInt8] {
            let count = try unsigned(4, field)
            guard count <= limit else { throw Malformed(description: "\(field) of \(count) bytes is over \(limit)") }
            return Array(try take(Int(count), field))
        }
        /// UTF-8 without control characters, at most `limit` bytes.
        mutating func text(_ field: String, limit: Int = CheckHelperMessage.textLimit) throws(Malformed) -> String {
            guard let text = String(validating: try bytes(field, limit: limit), as: UTF8.self) else { throw Malformed(description: "\(field) is not UTF-8") }
            guard CheckHelperMessage.isPlainText(text) else { throw Malformed(description: "\(field) holds a control character") }
            return text
        }
        /// A text that is an http or https URL.
        mutating func url(_ field: String) throws(Malformed) -> String {
            let url = try text(field, limit: CheckHelperMessage.urlLimit)
            guard CheckHelperMessage.isWebURL(url) else { throw Malformed(description: "\(field) is not an http or https URL") }
            return url
        }
        mutating func optional<Value>(_ field: String, _ value: (inout Reader) throws(Malformed) -> Value) throws(Malformed) -> Value? {
            switch try byte(field) {
            case 0: return nil
            case 1: return try value(&self)
            case let flag: throw Malformed(description: "\(field)'s presence \(flag) is neither 0 nor 1")
            }
        }
        mutating func optionalText(_ field: String) throws(Malformed) -> String? {
            try optional(field) { (reader: inout Reader) throws(Malformed) in try reader.text(field) }
        }
        mutating func family() throws(Malformed) -> AddressFamily {
            switch try byte("family") {
            case 4: return .ipv4
            case 6: return .ipv6
            case let family: throw Malformed(description: "family \(family) is none")
            }
        }
    }
}
