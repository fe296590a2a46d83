/// Exponential backoff with jitter and a cap, for adapters retrying what the outside refused.
///
/// The delay before retry `n` (1-based) is `initial × multiplier^(n-1)`, at most `maximum`,
/// then moved by up to ±`jitter` of itself so that many clients do not retry in step.
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

    /// The delay without jitter.
    public func nominalDelay(attempt: Int) -> Duration {
        let initialSeconds = Backoff.seconds(initial)
        var delay = initialSeconds
        for _ in 1..<max(1, attempt) {
            delay *= multiplier
            if delay >= Backoff.seconds(maximum) { break }
        }
        return .milliseconds(Int64(min(delay, Backoff.seconds(maximum)) * 1000))
    }

    public func delay(attempt: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &generator)
    }

    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let nominal = Backoff.seconds(nominalDelay(attempt: attempt))
        let spread = nominal * jitter
        let jittered = nominal + Double.random(in: -spread...spread, using: &generator)
        return .milliseconds(Int64(max(0, jittered) * 1000))
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
