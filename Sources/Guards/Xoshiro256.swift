/// xoshiro256** (Blackman and Vigna): the project's one random number generator. Fast, with 256
/// bits of state.
///
/// Seeded from a number (``init(seed:)``), it gives the same sequence every time: benchmark
/// frames, simulated faults, fuzz inputs, a test's seed. Seeded from the system's generator
/// (``init(seededBy:)``), it draws event ids: 256 bits of state keep the sequences of two
/// processes apart, where a 64-bit state would let billions of ids from two processes overlap.
/// Not for secrets.
public struct Xoshiro256: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// The sequence of `seed`: its state is four steps of SplitMix64 from it, as the authors advise.
    public init(seed: UInt64) {
        var mix = seed
        func splitMix() -> UInt64 {
            mix &+= 0x9E37_79B9_7F4A_7C15
            var z = mix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (splitMix(), splitMix(), splitMix(), splitMix())
    }

    /// A state drawn from `seed` (the system's generator, once per process).
    public init(seededBy seed: some RandomNumberGenerator) {
        var seed = seed
        state = (seed.next(), seed.next(), seed.next(), seed.next())
        // The one state it never leaves.
        if state == (0, 0, 0, 0) { state.0 = 1 }
    }

    public mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}
