import Guards
import Testing

/// Every kind of bad number, refused with the value and what is expected; never a trap.
struct BoundedNumberTests {
    @Test(arguments: [
        ("nan", "'nan' is not a whole number (give a whole number from 1 to 60000)"),
        ("inf", "'inf' is not a whole number (give a whole number from 1 to 60000)"),
        ("1.5", "'1.5' is not a whole number (give a whole number from 1 to 60000)"),
        ("", "'' is not a whole number (give a whole number from 1 to 60000)"),
        ("99999999999999999999", "'99999999999999999999' is too large (give a whole number from 1 to 60000)"),
        ("-99999999999999999999", "'-99999999999999999999' is too small (give a whole number from 1 to 60000)"),
        ("-5", "'-5' is out of range (give a whole number from 1 to 60000)"),
        ("0", "'0' is out of range (give a whole number from 1 to 60000)"),
        ("60001", "'60001' is out of range (give a whole number from 1 to 60000)"),
    ])
    func aBadWholeNumberIsRefusedSayingWhatIsExpected(text: String, message: String) {
        #expect(throws: BoundedNumber.Refusal.self) { try BoundedNumber.integer(text, in: 1...60_000) }
        do {
            _ = try BoundedNumber.integer(text, in: 1...60_000)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func aWholeNumberInRangeIsRead() throws {
        #expect(try BoundedNumber.integer("1", in: 1...60_000) == 1)
        #expect(try BoundedNumber.integer("+60000", in: 1...60_000) == 60_000)
        #expect(try BoundedNumber.integer("18446744073709551615", in: UInt64.min...UInt64.max) == UInt64.max)
    }

    @Test func aNegativeNumberForAnUnsignedTypeIsTooSmall() {
        let refusal = BoundedNumber.Refusal(
            value: "-1", problem: "is too small", expected: "a whole number from 0 to 10")
        #expect(throws: refusal) {
            try BoundedNumber.integer("-1", in: UInt32(0)...10)
        }
    }

    @Test(arguments: [
        ("nan", "is not a number"), ("NaN", "is not a number"), ("inf", "is not a finite number"),
        ("-infinity", "is not a finite number"), ("1e400", "is too large"), ("-1e400", "is too small"),
        ("0x10", "is not a number"), ("1_0", "is not a number"), ("", "is not a number"), ("-0.5", "is out of range"),
        ("1.0001", "is out of range"),
    ])
    func aBadDecimalIsRefused(text: String, problem: String) {
        #expect(throws: BoundedNumber.Refusal(value: text, problem: problem, expected: "a number from 0 to 1")) {
            try BoundedNumber.decimal(text, in: 0...1)
        }
    }

    @Test func aDecimalInRangeIsRead() throws {
        #expect(try BoundedNumber.decimal("0.25", in: 0...1) == 0.25)
        #expect(try BoundedNumber.decimal("1e-3", in: 0...1) == 0.001)
        #expect(try BoundedNumber.decimal("0", in: 0...1) == 0)
    }

    @Test func durationsAreReadInTheirUnitsWithinBounds() throws {
        #expect(try BoundedNumber.milliseconds("250", in: 1...1000) == .milliseconds(250))
        #expect(try BoundedNumber.seconds("2.5", in: 0.001...3600) == .milliseconds(2500))
        #expect(throws: BoundedNumber.Refusal.self) {
            try BoundedNumber.milliseconds("9223372036854775807", in: 1...1000)
        }
        #expect(throws: BoundedNumber.Refusal.self) { try BoundedNumber.seconds("1e300", in: 0.001...3600) }
        let refusal = BoundedNumber.Refusal(
            value: "0", problem: "is out of range", expected: "a number from 0.001 to 3600")
        #expect(throws: refusal) { try BoundedNumber.seconds("0", in: 0.001...3600) }
    }

    @Test func aDurationFromSecondsNeverTraps() {
        #expect(BoundedNumber.duration(seconds: 1.5) == .milliseconds(1500))
        #expect(BoundedNumber.duration(seconds: .nan) == .zero)
        #expect(BoundedNumber.duration(seconds: .infinity) == .seconds(100 * 365 * 86_400))
    }

    @Test func theParserClosuresRefuseAsTheFunctionsDo() {
        let parse = BoundedNumber.integers(in: Int32(1)...10)
        #expect(throws: BoundedNumber.Refusal.self) { try parse("11") }
        #expect(throws: BoundedNumber.Refusal.self) { try BoundedNumber.decimals(in: 0...1)("nan") }
    }
}
