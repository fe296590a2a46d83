import Guards
import RatesServer
import Testing

@Suite struct ECBHistoryTests {
    @Test func aRowKeepsTheRatesAsPublishedInTheColumnsOrderWithoutTheMissingOnes() throws {
        // Given the ECB's layout: a trailing comma, N/A for a currency not quoted that day.
        let csv = "Date,USD,JPY,CYP,\n2026-10-30,1.1172,175.68,N/A,\n"

        let history = try ECBHistory(csv: csv)

        #expect(history.fixings.count == 1)
        #expect(history.fixings[0].date == "2026-10-30")
        #expect(history.fixings[0].rates.map(\.currency) == ["USD", "JPY"])
        #expect(history.fixings[0].rates.map(\.rate) == ["1.1172", "175.68"])
    }

    @Test func spacesAroundCellsCRLFAndBlankLinesAreNotPartOfTheData() throws {
        let csv = "Date, USD ,\tGBP\r\n\r\n2026-10-29 , 1.1 ,0.8\t\r\n\n2026-10-30,1.2, N/A \r\n"

        let history = try ECBHistory(csv: csv)

        #expect(history.fixings.map(\.date) == ["2026-10-29", "2026-10-30"])
        #expect(history.fixings[0].rates.map(\.currency) == ["USD", "GBP"])
        #expect(history.fixings[0].rates.map(\.rate) == ["1.1", "0.8"])
        #expect(history.fixings[1].rates.map(\.rate) == ["1.2"])
    }

    @Test func rowsAreOldestFirstWhateverTheFilesOrder() throws {
        let csv = "Date,USD\n2026-10-30,1.3\n1999-01-04,1.1789\n2010-05-05,1.2\n"

        let history = try ECBHistory(csv: csv)

        #expect(history.fixings.map(\.date) == ["1999-01-04", "2010-05-05", "2026-10-30"])
        #expect(history.fixing(onOrBefore: "2010-06-01")?.rates.first?.rate == "1.2")
        #expect(history.fixing(onOrBefore: "1999-01-03") == nil)
    }

    @Test(arguments: [
        ("", "the CSV is empty"),
        ("\n\n", "the CSV is empty"),
        ("Day,USD\n2026-10-30,1.1\n", "the CSV's first column is 'Day', expected 'Date'"),
        ("Date,USD\n", "the CSV has no rows"),
        ("Date,USD\n2026-10-30,1.1\n30/10/26,1.2\n", "line 3: no date"),
        ("Date,USD\n,1.1\n", "line 2: no date"),
    ])
    func aFileThatIsNotTheECBsLayoutIsRefusedSayingWhatIsWrong(csv: String, problem: String) {
        let error = #expect(throws: ECBHistory.LoadError.self) { try ECBHistory(csv: csv) }
        #expect(error?.description == problem)
    }

    @Test func theBundledHistoryRunsFromTheEurosFirstDayToOctober2026() async throws {
        let history = try await OwnThread.run(name: "test-ecb") { try ECBHistory.bundled() }

        #expect(history.fixings.count == 7126)
        #expect(history.fixings.first?.date == "1999-01-04")
        #expect(history.fixings.first?.rates.first.map { "\($0.currency) \($0.rate)" } == "USD 1.1789")
        #expect(history.fixings.last?.date == "2026-10-30")
        #expect(history.fixings.last?.rates.first.map { "\($0.currency) \($0.rate)" } == "USD 1.1172")
    }
}
