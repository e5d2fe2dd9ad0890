/// RFC 7050: a host learns the NAT64 prefix of a network whose DNS64 synthesizes addresses by
/// asking for the AAAA records of ``name``, which has only A records (``wellKnownAddresses``):
/// each AAAA answer is one of them embedded in a prefix (RFC 6052 §2.2).
package enum RFC7050 {
    /// The well-known name (§2.2).
    package static let name = "ipv4only.arpa"
    /// Its IPv4 addresses, the well-known addresses (§2.2): 192.0.0.170 and 192.0.0.171.
    package static let wellKnownAddresses = [IPAddress("192.0.0.170")!, IPAddress("192.0.0.171")!]

    /// The NAT64 prefixes the AAAA answers for ``name`` embed a well-known address in (§3: for
    /// each answer, the prefix length whose embedding of a well-known address gives exactly
    /// that address, the lengths tried from /96 down), without duplicates, in the answers'
    /// order. An answer that embeds none (not synthesized: an IPv6 address the name really has,
    /// or a DNS64 that got it wrong) gives none.
    package static func prefixes(fromAnswers answers: [IPAddress]) -> [(network: IPAddress, length: Int)] {
        var found: [(network: IPAddress, length: Int)] = []
        for answer in answers where answer.family == .ipv6 {
            guard let prefix = prefix(of: answer), !found.contains(where: { $0 == prefix }) else { continue }
            found.append(prefix)
        }
        return found
    }

    /// The prefix `answer` embeds a well-known address in, the longest first; nil when none.
    private static func prefix(of answer: IPAddress) -> (network: IPAddress, length: Int)? {
        for length in NAT64Synthesis.prefixLengths.sorted(by: >) {
            guard wellKnownAddresses.contains(where: { NAT64Synthesis.address(embedding: $0, in: answer, length: length) == answer }) else { continue }
            let network = IPAddress(family: .ipv6, bytes: Array(answer.bytes.prefix(length / 8)) + [UInt8](repeating: 0, count: 16 - length / 8))!
            return (network, length)
        }
        return nil
    }
}
