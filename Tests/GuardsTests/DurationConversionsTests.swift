import Guards
import Testing

struct DurationConversionsTests {
    @Test func secondsKeepTheFraction() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.microseconds(250).inSeconds == 0.000_25)
        #expect(Duration.seconds(-2).inSeconds == -2)
        #expect(Duration.zero.inSeconds == 0)
    }

    @Test func millisecondsDropTheRestTowardZero() {
        #expect(Duration.seconds(3).inMilliseconds == 3000)
        #expect(Duration.microseconds(2999).inMilliseconds == 2)
        #expect(Duration.microseconds(-2999).inMilliseconds == -2)
        #expect(Duration.nanoseconds(999_999).inMilliseconds == 0)
    }

    @Test func millisecondsSaturateInsteadOfTrapping() {
        #expect(Duration.seconds(Int64.max).inMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).inMilliseconds == .min)
    }

    @Test func nanosecondsAndWholeSecondsDropTheRestTowardZero() {
        #expect(Duration.milliseconds(1500).inNanoseconds == 1_500_000_000)
        #expect(Duration.nanoseconds(-7).inNanoseconds == -7)
        #expect(Duration.seconds(Int64(300 * 365 * 86400)).inNanoseconds == .max, "saturates past 292 years")
        #expect(Duration.seconds(Int64(-300 * 365 * 86400)).inNanoseconds == .min)
        #expect(Duration.milliseconds(2999).inWholeSeconds == 2)
        #expect(Duration.milliseconds(-2999).inWholeSeconds == -2)
    }
}
