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

    /// The C library's calendar reads and writes what Foundation's did (vendctl used it before):
    /// instants from 1906 to 2099, offsets either side of UTC, leap days included.
    @Test(arguments: [0, 9 * 3600, -(3 * 3600 + 30 * 60), 14 * 3600])
    func agreesWithFoundationsCalendar(offset: Int) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offset)!
        let zone = DateText.Zone.offset(seconds: offset)
        for seconds in Array(stride(from: Int64(-2_000_000_000), to: 4_100_000_000, by: 7_777_777)) + [951_782_400, 4_107_456_000] {
            let milliseconds = seconds * 1000 + 250
            let c = calendar.dateComponents(
                [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "??" }
            let foundations = "\(c.year ?? 0)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second))"
            let text = DateText.format(milliseconds, seconds: true, timeZone: zone)
            #expect(text == foundations)
            #expect(try DateText.parse(text, timeZone: zone) == seconds * 1000)
        }
    }
}
