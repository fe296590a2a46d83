import Foundation

/// How fast each of two threads runs CPU-bound work while both run, as a fraction of one
/// thread running alone: 1.0 on two cores of their own, about 0.6 on two hyperthreads of one
/// core or on virtual processors whose host is busy.
///
/// The read side's benchmarks compare work spread over two threads (reading ahead, folding)
/// with a baseline on one thread alone, so this fraction bounds their ratios: a figure below
/// a target can be the machine's, not the code's.
enum ParallelSpeed {
    /// The fraction, from the least-disturbed of `rounds` rounds: in each, a fixed arithmetic
    /// loop timed on one thread alone, then on two threads at once.
    static func measure(rounds: Int = 3) -> Double {
        var alone = Double.infinity
        var together = Double.infinity
        for _ in 0..<max(rounds, 1) {
            alone = min(alone, seconds(threads: 1))
            together = min(together, seconds(threads: 2))
        }
        return alone / together
    }

    /// Wall seconds for `threads` threads each to run the loop once.
    private static func seconds(threads: Int) -> Double {
        let done = DispatchSemaphore(value: 0)
        let started = ContinuousClock.now
        for _ in 0..<threads {
            let thread = Thread {
                sink(spin(iterations: 50_000_000))
                done.signal()
            }
            thread.start()
        }
        for _ in 0..<threads { done.wait() }
        return (ContinuousClock.now - started).inSeconds
    }

    /// xorshift64: a dependent chain of arithmetic that the compiler cannot fold away.
    private static func spin(iterations: Int) -> UInt64 {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<iterations {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
        }
        return state
    }

    /// Keeps a result alive so that the loop that made it is not removed.
    @inline(never)
    private static func sink(_ value: UInt64) {
        if value == 0 { print("") }
    }
}
