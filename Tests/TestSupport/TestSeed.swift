import Foundation
import Guards

/// The seed of a test's random draws: a new one each run, so that runs keep exploring, or the
/// one `BUREAU_TEST_SEED` gives, to replay a failure. Said on standard output, with what it is
/// for, so that a failed run's log holds what reproduces it.
public enum TestSeed {
    /// A generator for `purpose` (the test's name will do), seeded as above; prints the seed.
    public static func generator(for purpose: String) -> Xoshiro256 {
        let given = ProcessInfo.processInfo.environment["BUREAU_TEST_SEED"].flatMap { UInt64($0) }
        let seed = given ?? UInt64.random(in: .min ... .max)
        print("\(purpose): random seed \(seed) (BUREAU_TEST_SEED=\(seed) draws the same again)")
        return Xoshiro256(seed: seed)
    }
}
