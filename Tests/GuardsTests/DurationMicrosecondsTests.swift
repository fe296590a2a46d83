import Guards
import Testing

/// Microseconds, and figures with fractions that are the nearest Double to the duration.
struct DurationMicrosecondsTests {
    @Test func microsecondsDropTheRestTowardZeroAndSaturate() {
        #expect(Duration.milliseconds(1500).inMicroseconds == 1_500_000)
        #expect(Duration.nanoseconds(1999).inMicroseconds == 1)
        #expect(Duration.nanoseconds(-1999).inMicroseconds == -1)
        #expect(Duration.nanoseconds(999).inMicroseconds == 0)
        #expect(Duration.seconds(Int64.max).inMicroseconds == .max)
        #expect(Duration.seconds(Int64.min).inMicroseconds == .min)
    }

    @Test func secondsAndFractionalMillisecondsAreTheNearestDouble() {
        // Adding the seconds and their fraction, each rounded, gave 1.1179999999999999.
        for milliseconds in [1118, 1122, 1128, 59_999, 123_456_789] as [Int64] {
            #expect(Duration.milliseconds(milliseconds).inSeconds == Double(milliseconds) / 1000)
        }
        #expect(Duration.nanoseconds(1_000_000_001).inSeconds == 1.000_000_001)
        #expect(Duration.microseconds(1250).inFractionalMilliseconds == 1.25)
        #expect(Duration.microseconds(1118).inFractionalMilliseconds == 1.118)
        #expect(Duration.seconds(-3).inFractionalMilliseconds == -3000)
        #expect(Duration.seconds(Int64.max).inSeconds == Double(Int64.max))
    }

    @Test func microsecondsKeepTheirHundredths() {
        #expect(Duration.nanoseconds(420).microsecondsText(decimals: 2) == "0.42")
        #expect(Duration.nanoseconds(12_345).microsecondsText(decimals: 2) == "12.35")
        #expect(Duration.milliseconds(3).microsecondsText(decimals: 2) == "3000.00")
        #expect(Duration.nanoseconds(-1500).microsecondsText(decimals: 1) == "-1.5")
    }

    @Test func microsecondsFromElsewhereBecomeDurationsWithoutTrapping() {
        #expect(Duration.microseconds(saturating: 2.5) == .nanoseconds(2500))
        #expect(Duration.microseconds(saturating: .nan) == .zero)
        #expect(Duration.microseconds(saturating: 1e300) == Duration.microseconds(saturating: .infinity))
        #expect(Duration.microseconds(saturating: -1e300) < .zero)
    }
}
