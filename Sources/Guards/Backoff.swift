/// Exponential backoff with jitter and a cap: how long to wait before trying again what failed.
///
/// The one backoff: adapters retrying what the outside refused use it with jitter; a caller
/// that wants fixed steps (a supervisor's restarts, a client's publish retries) sets `jitter`
/// to 0 and reads ``nominalDelay(attempt:)``.
///
/// The delay before retry `n` (1-based) is `initial × multiplier^(n-1)`, at most `maximum`,
/// then moved by up to ±`jitter` of itself so that many clients do not retry in step.
/// Delays are whole milliseconds, converted as every duration is (`Duration+Conversions`): a NaN
/// or an infinite multiplier gives a delay, never a trap.
public struct Backoff: Sendable, Equatable {
    public var initial: Duration
    public var multiplier: Double
    public var maximum: Duration
    /// A fraction, e.g. 0.2 for ±20%.
    public var jitter: Double

    public init(
        initial: Duration = .milliseconds(500), multiplier: Double = 2, maximum: Duration = .seconds(30),
        jitter: Double = 0.2
    ) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The delay before retry `attempt` (1-based; 0 and below count as 1) without jitter.
    public func nominalDelay(attempt: Int) -> Duration {
        let cap = maximum.inSeconds
        var delay = initial.inSeconds
        for _ in 1..<max(1, attempt) {
            delay *= multiplier
            if delay >= cap { break }
        }
        return .milliseconds(saturating: (min(delay, cap) * 1000).rounded(.towardZero))
    }

    /// The delay before retry `attempt`, with jitter from the system's random numbers.
    public func delay(attempt: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &generator)
    }

    /// The delay before retry `attempt`, with jitter from `generator` (seeded in tests).
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let nominal = nominalDelay(attempt: attempt).inSeconds
        let spread = abs(nominal * jitter)
        let jittered = nominal + Double.random(in: -spread...spread, using: &generator)
        return .milliseconds(saturating: (max(0, jittered) * 1000).rounded(.towardZero))
    }
}
