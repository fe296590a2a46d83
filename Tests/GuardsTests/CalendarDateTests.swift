import Guards
import Testing

struct CalendarDateTests {
    @Test(arguments: ["2024-02-29", "2000-02-29", "1999-01-04", "2026-12-31", "2026-04-30"])
    func aRealDayIsRead(text: String) throws {
        let date = try #require(CalendarDate(text))
        #expect(date.description == text)
    }

    @Test(arguments: [
        "2024-02-30", "2023-02-29", "1900-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-01-00",
        "2026-1-01", "26-01-01", "2026/01/01", "2026-01-01T00:00", "０２０２-01-01", "0999-01-01", "",
    ])
    func anythingElseIsNot(text: String) {
        #expect(CalendarDate(text) == nil)
    }

    @Test func datesOrderAsDays() throws {
        let earlier = try #require(CalendarDate("2024-02-29"))
        let later = try #require(CalendarDate("2024-03-01"))
        #expect(earlier < later)
    }
}
