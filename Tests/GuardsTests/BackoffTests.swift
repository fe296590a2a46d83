import Guards
import Testing

struct BackoffTests {
    @Test func delaysDoubleUpToTheCap() {
        let backoff = Backoff(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30), jitter: 0.2)
        #expect(
            (1...8).map { backoff.nominalDelay(attempt: $0) }
                == [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000].map { Duration.milliseconds($0) })
    }

    @Test func jitterStaysWithinItsShare() {
        let backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0.2)
        for attempt in 1...6 {
            let nominal = backoff.nominalDelay(attempt: attempt)
            for _ in 0..<50 {
                let delay = backoff.delay(attempt: attempt)
                #expect(delay >= nominal * 0.8 && delay <= nominal * 1.2)
            }
        }
    }
}
