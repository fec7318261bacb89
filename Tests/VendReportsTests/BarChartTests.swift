import Testing

@testable import VendReports

@Suite struct BarChartTests {
    @Test func theLargestValueFillsTheWidthAndOthersAreProportional() {
        #expect(BarChart.bar(10, maximum: 10, width: 4) == "████")
        #expect(BarChart.bar(5, maximum: 10, width: 4) == "██")
        #expect(BarChart.bar(1, maximum: 10, width: 4) == "▍")  // 3.2 eighths → 3
    }

    @Test func anySaleShowsAndNoneIsEmpty() {
        #expect(BarChart.bar(1, maximum: 1_000, width: 10) == "▏")
        #expect(BarChart.bar(0, maximum: 10, width: 10) == "")
    }
}
