/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny seeded generator, so that a failing mutation
/// can be reproduced from its iteration number and a soak's churn replayed from the seed it prints.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// - Parameter seed: any value.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
