// `NetworkID` and each `Interfaces` entry's `network-id`: an opaque id of the network a route
// leads into, as Firefox's network id (a hash over the gateway's MAC) and Android's per-network
// keys are. Keyed by the machine (the daemon passes `sd_id128_get_machine_app_specific` of
// ``NetworkIdentity/applicationID``), so the same network gives the same id on this host across
// reboots and another id on another host, and the id reveals neither the gateway's address
// nor /etc/machine-id.

/// The rule of `NetworkID`: HMAC-SHA256, keyed by the machine's app-specific id, of the route's
/// gateway's link-layer address (and the Wi-Fi SSID where known), its first 16 bytes in
/// hexadecimal; "" without the link-layer address.
package enum NetworkIdentity {
    /// The application id given to `sd_id128_get_machine_app_specific` for the key (fixed: a new
    /// one would give every network a new id).
    package static let applicationID: [UInt8] = [
        0x6e, 0x2f, 0x4f, 0x1b, 0x93, 0x0d, 0x4c, 0x5e, 0xa8, 0x71, 0x3c, 0x52, 0x0b, 0xd4, 0x7a, 0x19,
    ]

    /// The id of the network behind a gateway.
    ///
    /// - Parameters:
    ///   - gatewayLinkLayerAddress: the gateway's link-layer address (its MAC) as the kernel's
    ///     neighbour entry has it; nil or empty: not known.
    ///   - ssid: the Wi-Fi network's SSID when known.
    ///   - key: the machine's key; empty: none (the id is then "").
    /// - Returns: 32 lower-case hexadecimal digits, or "" when the address or the key is missing.
    package static func id(gatewayLinkLayerAddress: [UInt8]?, ssid: [UInt8]? = nil, key: [UInt8]) -> String {
        guard let address = gatewayLinkLayerAddress, !address.isEmpty, !key.isEmpty else { return "" }
        // Length-prefixed, so that no address and SSID run into another pair's bytes.
        var message = [UInt8(clamping: address.count)] + address
        if let ssid { message += [UInt8(clamping: ssid.count)] + ssid }
        return SHA256.hmac(key: key, message: message).prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) over byte arrays: what ``NetworkIdentity``
/// needs, without a cryptography library in the daemon.
package enum SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    private static let initialState: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    private static let blockSize = 64

    /// The 32-byte digest of `message`.
    package static func hash(_ message: [UInt8]) -> [UInt8] {
        var padded = message + [0x80]
        padded += [UInt8](repeating: 0, count: (blockSize + 56 - padded.count % blockSize) % blockSize)
        let bits = UInt64(message.count) &* 8
        padded += (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * $0)) }
        var state = initialState
        var schedule = [UInt32](repeating: 0, count: 64)
        for block in stride(from: 0, to: padded.count, by: blockSize) {
            for word in 0..<16 {
                schedule[word] = (0..<4).reduce(0) { $0 << 8 | UInt32(padded[block + 4 * word + $1]) }
            }
            for word in 16..<64 {
                let s0 = rotate(schedule[word - 15], 7) ^ rotate(schedule[word - 15], 18) ^ (schedule[word - 15] >> 3)
                let s1 = rotate(schedule[word - 2], 17) ^ rotate(schedule[word - 2], 19) ^ (schedule[word - 2] >> 10)
                schedule[word] = schedule[word - 16] &+ s0 &+ schedule[word - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
            for round in 0..<64 {
                let t1 = h &+ (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) &+ ((e & f) ^ (~e & g)) &+ roundConstants[round] &+ schedule[round]
                let t2 = (rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            for (index, value) in [a, b, c, d, e, f, g, h].enumerated() { state[index] = state[index] &+ value }
        }
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }

    /// HMAC-SHA256 of `message` under `key` (RFC 2104).
    package static func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > blockSize ? hash(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        return hash(block.map { $0 ^ 0x5c } + hash(block.map { $0 ^ 0x36 } + message))
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value >> count | value << (32 - count)
    }
}
