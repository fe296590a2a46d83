import Foundation
import RatesAdapter
import TestSupport
import Testing

struct ECBRatesParserTests {
    static func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "xml", subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    static func document(_ cubes: String, root: String = "gesmes:Envelope") -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <\(root) xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
            <gesmes:subject>Reference rates</gesmes:subject>
            <Cube>
            \(cubes)
            </Cube>
            </\(root)>
            """.utf8)
    }

    @Test func theDailyDocumentGivesItsFixing() throws {
        let fixing = try ECBRatesParser.latest(try Self.fixture("eurofxref-daily"))
        #expect(fixing.asOf == "2026-10-30")
        #expect(fixing.rates.count == 29)
        #expect(fixing.rates.first { $0.currency == "USD" }?.rate == "1.1172")
        #expect(fixing.rates.first { $0.currency == "JPY" }?.rate == "175.68")
        #expect(fixing.rates.map(\.currency) == fixing.rates.map(\.currency).sorted())
    }

    @Test func theNinetyDayDocumentGivesEveryFixingNewestFirst() throws {
        let fixings = try ECBRatesParser.parse(try Self.fixture("eurofxref-hist-90d"))
        #expect(fixings.map(\.asOf) == ["2026-10-30", "2026-10-29", "2026-10-28"])
        #expect(try ECBRatesParser.latest(try Self.fixture("eurofxref-hist-90d")).asOf == "2026-10-30")
    }

    @Test(arguments: [
        (Data(), "the body is empty"),
        (Data("   \n".utf8), "the body is empty"),
        (Data("not xml at all".utf8), "not XML at line 1"),
        (Data("<html><body>Service Unavailable</body></html>".utf8), "the root element is <html>"),
        (
            document("<Cube time='2026-10-30'><Cube rate='1.1'/></Cube>"),
            "<Cube> at line 5 is missing attribute 'currency'"
        ),
        (document("<Cube time='2026-10-30'><Cube currency='USD'/></Cube>"), "is missing attribute 'rate'"),
        (
            document("<Cube time='2026-10-30'><Cube currency='USD' rate='abc'/></Cube>"),
            "rate='abc' for USD at line 5 is not a positive decimal"
        ),
        (document("<Cube time='2026-10-30'><Cube currency='USD' rate='-1.2'/></Cube>"), "rate='-1.2' for USD"),
        (document("<Cube time='2026-10-30'><Cube currency='USD' rate='0'/></Cube>"), "rate='0' for USD"),
        (
            document("<Cube time='30/10/2026'><Cube currency='USD' rate='1'/></Cube>"),
            "time='30/10/2026' at line 5 is not a calendar date (YYYY-MM-DD)"
        ),
        (
            document("<Cube time='2024-02-30'><Cube currency='USD' rate='1'/></Cube>"),
            "time='2024-02-30' at line 5 is not a calendar date"
        ),
        (document("<Cube time='2023-02-29'><Cube currency='USD' rate='1'/></Cube>"), "time='2023-02-29'"),
        (document("<Cube time='2026-04-31'><Cube currency='USD' rate='1'/></Cube>"), "time='2026-04-31'"),
        (document("<Cube time='2026-13-01'><Cube currency='USD' rate='1'/></Cube>"), "time='2026-13-01'"),
        (
            document("<Cube time='2026-10-30'><Cube currency='EUR' rate='1'/></Cube>"),
            "EUR at line 5 is the base currency; it cannot be quoted against itself"
        ),
        (document("<Cube time='2026-10-30'><Cube currency='USD' rate='nan'/></Cube>"), "rate='nan' for USD"),
        (document("<Cube time='2026-10-30'><Cube currency='USD' rate='NaN'/></Cube>"), "rate='NaN' for USD"),
        (document("<Cube time='2026-10-30'><Cube currency='USD' rate='inf'/></Cube>"), "rate='inf' for USD"),
        (document("<Cube time='2026-10-30'><Cube currency='USD' rate='1e5'/></Cube>"), "rate='1e5' for USD"),
        (document("<Cube time='2026-10-30'><Cube currency='USD' rate='0.0000'/></Cube>"), "rate='0.0000' for USD"),
        (
            document(
                "<Cube time='2026-10-30'><Cube currency='USD' rate='\(String(repeating: "1", count: 41))'/></Cube>"),
            "is not a positive decimal"
        ),
        (
            document(
                "<Cube time='2026-10-30'><Cube currency='USD' rate='1' note='\(String(repeating: "x", count: 300))'/></Cube>"
            ),
            "note= of <Cube> at line 5 is 300 bytes long; the limit is 256"
        ),
        (
            Data("<!DOCTYPE x [<!ENTITY a \"aaaaaaaa\">]>\n<gesmes:Envelope/>".utf8),
            "it declares a document type (<!DOCTYPE>); ECB documents have none"
        ),
        (document("<Cube currency='USD' rate='1.1'/>"), "missing attribute 'time'"),
        (
            document("<Cube time='2026-10-30'><Cube currency='usd' rate='1'/></Cube>"),
            "currency='usd' at line 5 is not a three-letter code"
        ),
        (
            document("<Cube time='2026-10-30'><Cube currency='USD' rate='1'/><Cube currency='USD' rate='2'/></Cube>"),
            "USD appears twice"
        ),
        (document(""), "no <Cube time=…> element"),
        (document("<Cube time='2026-10-30'></Cube>"), "<Cube time='2026-10-30'> has no rates"),
        (document("<Cube time='2026-10-30'>", root: "gesmes:Envelope"), "not XML"),
    ])
    func aBrokenDocumentIsRejectedNamingWhatIsWrong(body: Data, problem: String) {
        #expect {
            _ = try ECBRatesParser.parse(body)
        } throws: { error in
            "\(error)".contains(problem)
        }
    }

    // Builds a 4 MiB body: off the cooperative pool.
    @Test(.ownThreads) func aBodyFarOverTheLimitIsRejectedWithoutParsing() {
        let huge = Data(repeating: 0x20, count: 4 << 20) + Self.document("<Cube time='2026-10-30'/>")
        #expect(throws: ECBParseError.tooLarge(bytes: huge.count, limit: ECBRatesParser.defaultLimit)) {
            _ = try ECBRatesParser.parse(huge)
        }
    }
}
