/// FNV-1a, 64 bits: a hash that, unlike `Hasher`, is the same in every process and every run,
/// for what must be computed again elsewhere (a derived event id, a simulated fault's draw).
/// Not for anything an adversary chooses to collide.
public enum FNV1a {
    public static func hash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}
