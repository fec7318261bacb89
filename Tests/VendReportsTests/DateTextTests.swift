import Foundation
import Testing
import VendReports

@Suite struct DateTextTests {
    let utc = DateText.Zone.utc
    let seoul = DateText.Zone.offset(seconds: 9 * 3600)

    @Test func readsEachAcceptedForm() throws {
        #expect(try DateText.parse("2025-03-01", timeZone: utc) == 1_740_787_200_000)
        #expect(try DateText.parse("2025-03-01T09:30", timeZone: utc) == 1_740_821_400_000)
        #expect(try DateText.parse("2025-03-01 09:30", timeZone: utc) == 1_740_821_400_000)
        #expect(try DateText.parse("2025-03-01T09:30:15", timeZone: utc) == 1_740_821_415_000)
        #expect(try DateText.parse("2025-03-01T09:30Z", timeZone: seoul) == 1_740_821_400_000)
        #expect(try DateText.parse("2025-03-01T18:30+09:00", timeZone: utc) == 1_740_821_400_000)
        #expect(try DateText.parse("2025-03-01T09:30", timeZone: seoul) == 1_740_821_400_000 - 9 * 3_600_000)
    }

    @Test(arguments: [
        "", "2025-3-1", "2025-02-30", "2025-13-01", "2025-03-01T25:00", "2025-03-01T09", "01.03.2025",
        "2025-03-01T09:30 ", "2025-03-01T09:30+9", "tomorrow",
    ])
    func refusesAnythingElseNamingTheForms(_ text: String) {
        #expect(throws: DateText.Invalid.self) { try DateText.parse(text, timeZone: utc) }
        #expect(DateText.Invalid(text: text).description.contains("YYYY-MM-DD"))
    }

    @Test func formatsInTheGivenZone() {
        #expect(DateText.format(1_740_821_415_000, timeZone: utc) == "2025-03-01 09:30")
        #expect(DateText.format(1_740_821_415_000, seconds: true, timeZone: seoul) == "2025-03-01 18:30:15")
    }
}
