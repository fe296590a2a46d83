import Guards
import Testing

struct DurationFormattingTests {
    @Test func secondsReadAsAPersonWritesThemToTheMillisecond() {
        #expect(Duration.seconds(2).secondsText() == "2")
        #expect(Duration.milliseconds(500).secondsText() == "0.5")
        #expect(Duration.milliseconds(2250).secondsText() == "2.25")
        #expect(Duration.microseconds(2999).secondsText() == "0.002", "the rest is dropped")
        #expect(Duration.milliseconds(-1500).secondsText() == "-1.5")
    }

    @Test func fixedDecimalsRoundHalfAwayFromZero() {
        #expect(Duration.milliseconds(1250).secondsText(decimals: 1) == "1.3")
        #expect(Duration.milliseconds(1250).secondsText(tenths: true) == "1.3")
        #expect(Duration.seconds(10).secondsText(decimals: 1) == "10.0")
        #expect(Duration.milliseconds(59_960).secondsText(decimals: 1) == "60.0", "the carry reaches the seconds")
        #expect(Duration.milliseconds(250).secondsText(decimals: 3) == "0.250")
        #expect(Duration.microseconds(1_000_500).secondsText(decimals: 3) == "1.001")
        #expect(Duration.milliseconds(1499).secondsText(decimals: 0) == "1")
        #expect(Duration.milliseconds(-250).secondsText(decimals: 3) == "-0.250")
    }

    @Test func millisecondsKeepTheirHundredths() {
        #expect(Duration.microseconds(420).millisecondsText(decimals: 2) == "0.42")
        #expect(Duration.microseconds(12_345).millisecondsText(decimals: 2) == "12.35")
        #expect(Duration.seconds(3).millisecondsText(decimals: 2) == "3000.00")
        #expect(Duration.nanoseconds(1).millisecondsText(decimals: 18) == "0.000001000000000000")
    }

    @Test func compactTextShowsWholeUnitsForAColumnOfUptimes() {
        #expect(Duration.milliseconds(45_900).compactText() == "45s")
        #expect(Duration.seconds(303).compactText() == "5m3s")
        let twoHoursAndSome: Int64 = 2 * 3600 + 5 * 60 + 59
        #expect(Duration.seconds(twoHoursAndSome).compactText() == "2h5m")
        #expect(Duration.seconds(Int64.max).compactText() == "\(Int64.max / 3600)h\(Int64.max / 60 % 60)m")
    }

    @Test func scaledTextPicksTheUnitBySize() {
        #expect(Duration.nanoseconds(412_400).scaledText() == "412 µs")
        #expect(Duration.microseconds(3_140).scaledText() == "3.1 ms")
        #expect(Duration.microseconds(999_960).scaledText() == "1000.0 ms", "rounded to the microsecond first")
        #expect(Duration.milliseconds(2_405).scaledText() == "2.41 s")
        #expect(Duration.milliseconds(-5).scaledText() == "-5.0 ms")
    }

    @Test func figuresFromElsewhereBecomeDurationsWithoutTrapping() {
        #expect(Duration.seconds(saturating: 1.5) == .milliseconds(1500))
        #expect(Duration.milliseconds(saturating: 0.25) == .microseconds(250))
        #expect(Duration.seconds(saturating: .nan) == .zero)
        #expect(Duration.milliseconds(saturating: .nan) == .zero)
        #expect(Duration.seconds(saturating: 1e300) == Duration.seconds(saturating: .infinity))
        #expect(Duration.seconds(saturating: -1e300) < .zero)
        #expect(Duration.seconds(saturating: 1e300).compactText().hasSuffix("m"))
    }
}
