import Foundation
import Money
import Testing

struct MoneyTests {
    @Test func currenciesKnowTheirMinorUnits() throws {
        #expect(try #require(Currency("jpy")).minorUnits == 0)
        #expect(try #require(Currency("EUR")).minorUnits == 2)
        #expect(try #require(Currency("KWD")).minorUnits == 3)
        #expect(Currency("XYZ") == nil)
    }

    @Test func aCodeIsThreeLettersOfEitherCaseAndComesBackUpperCase() throws {
        #expect(try #require(Currency("usd")).code == "USD")
        #expect(try #require(Currency("cHf")).code == "CHF")
        #expect(Currency.upperCased("eur") == "EUR")
        #expect(Currency.upperCased("euro") == "EURO")
        for code in ["", "US", "USDD", "U$D", "US ", "ÜSD", "US\u{0}", "[SD", "{SD", "@SD", "`SD"] {
            #expect(Currency(code) == nil, "\(code.debugDescription)")
        }
        // Every code the table knows, in both cases, and nothing else of the 17,576.
        #expect(Currency.all.count == 54)
        for currency in Currency.all {
            #expect(Currency(currency.code.lowercased()) == currency)
        }
        let letters = (UInt8(ascii: "A")...UInt8(ascii: "Z")).map { String(UnicodeScalar($0)) }
        var known: [String] = []
        for first in letters {
            for second in letters {
                for third in letters where Currency(first + second + third) != nil {
                    known.append(first + second + third)
                }
            }
        }
        #expect(known == Currency.all.map(\.code))
    }

    @Test(arguments: [("100", "100.00"), ("0.5", "0.50"), ("1000000000", "1000000000.00")])
    func amountsAreWrittenWithTheCurrencysDecimals(text: String, expected: String) throws {
        #expect(try Money(parsing: text, currency: .euro).text == expected)
    }

    @Test(arguments: [
        ("", "the number is empty"), ("1,5", "is not a decimal"), ("1e5", "is not a decimal"),
        (".", "is not a decimal"),
        ("1.2.3", "is not a decimal"), ("0", "not greater than zero"), ("-3", "not greater than zero"),
        ("1000000000.01", "over the limit"), ("1.001", "more decimals than EUR allows (2)"),
    ])
    func badAmountsSayWhatIsWrong(text: String, problem: String) {
        #expect {
            _ = try Money(parsing: text, currency: .euro)
        } throws: { error in
            "\(error)".contains(problem)
        }
    }

    @Test func roundingIsHalfToEvenAtTheMinorUnits() throws {
        let yen = try #require(Currency("JPY"))
        #expect(Money(rounding: Decimal(string: "2.5") ?? 0, currency: yen).text == "2")
        #expect(Money(rounding: Decimal(string: "3.5") ?? 0, currency: yen).text == "4")
        #expect(Money(rounding: Decimal(string: "1.005") ?? 0, currency: .euro).text == "1.00")
        #expect(Money(rounding: Decimal(string: "1.015") ?? 0, currency: .euro).text == "1.02")
    }

    @Test func crossRatesGoThroughTheEuro() throws {
        let usd = try #require(Currency("USD"))
        let jpy = try #require(Currency("JPY"))
        let rates = ReferenceRates(asOf: "2026-10-30", rates: [usd: Decimal(string: "1.1172") ?? 0, jpy: 175.68])
        #expect(rates.crossRate(from: .euro, to: usd) == Decimal(string: "1.1172"))
        #expect(rates.quote(from: usd, to: jpy) == Decimal(string: "157.250"))
        #expect(rates.quote(from: jpy, to: usd) == Decimal(string: "0.00635929"))
        #expect(rates.quote(from: usd, to: .euro) == Decimal(string: "0.895095"))
        #expect(rates.crossRate(from: usd, to: try #require(Currency("GBP"))) == nil)
    }

    @Test func significantDigitsRoundHalfToEven() {
        #expect(DecimalText.round(Decimal(string: "157.2503") ?? 0, significantDigits: 6) == Decimal(string: "157.250"))
        #expect(
            DecimalText.round(Decimal(string: "0.001234565") ?? 0, significantDigits: 6)
                == Decimal(string: "0.00123456"))
        #expect(DecimalText.round(Decimal(string: "999999.5") ?? 0, significantDigits: 6) == Decimal(1_000_000))
    }
}
