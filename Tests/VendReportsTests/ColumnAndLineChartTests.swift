import Foundation
import Testing

@testable import VendReports

@Suite struct ColumnAndLineChartTests {
    /// The heights of the columns drawn, in order.
    func heights(_ svg: String) -> [Double] {
        svg.components(separatedBy: "<rect class='column'").dropFirst().compactMap { part in
            part.range(of: "height='").map { Double(part[$0.upperBound...].prefix { $0 != "'" }) ?? -1 }
        }
    }

    @Test func stackedColumnsShareOneScaleFromZeroAndEveryTextIsEscaped() {
        let chart = ColumnChart(
            title: "Sales <b>&", series: ["cash", "card's"],
            categories: [.init(label: "<i>", values: [300, 100]), .init(label: "b", values: [0, 0]), .init(label: "c", values: [200, -50])],
            stacked: true, emptyText: "none", valueText: { "\($0) <won>" })
        let svg = chart.svgElement
        #expect(svg.contains("Sales &lt;b&gt;&amp;") && svg.contains("card&apos;s") && svg.contains("&lt;i&gt;") && !svg.contains("<b>"))
        // The tallest stack (400) under the scale's top (500): 180 px of plot for 500.
        #expect(heights(svg) == [108, 36, 72], "300, 100, then 200; nothing for zero, a negative value drawn as zero")
        #expect(svg.contains("<title>&lt;i&gt; · cash: 300 &lt;won&gt;</title>"))
        #expect(svg.contains(">500 &lt;won&gt;</text>"), "the scale's top is a round number")
    }

    @Test func sideBySideColumnsAndNothingToShow() {
        let pair = ColumnChart(
            title: "t", series: ["machine", "driver"], categories: [.init(label: "#1", values: [5000, 4900])], stacked: false, emptyText: "none",
            valueText: { "\($0)" })
        #expect(heights(pair.svgElement) == [180, 176.4])
        let empty = ColumnChart(
            title: "t", series: ["a"], categories: [.init(label: "x", values: [0])], stacked: false, emptyText: "no sales", valueText: { "\($0)" })
        #expect(empty.svgElement.contains(">no sales</text>") && heights(empty.svgElement).isEmpty)
    }

    @Test func aLineBreaksWhereReadingsStopAndTheReferenceIsDashed() {
        let points = [0, 60, 120, 4_000, 4_060].map { LineChart.Point(at: Int64($0) * 1000, value: 4 + Double($0 % 7)) }
        let chart = LineChart(
            title: "Zone <cold>", series: [("°C", points)], from: 0, to: 5_000_000, ticks: [.init(at: 0, label: "11-28")],
            reference: ("set point 4", 4), unit: "°C", breakAfter: 600_000, emptyText: "none")
        let svg = chart.svgElement
        #expect(svg.components(separatedBy: "<polyline class='reading'").count == 3, "two runs: three readings, then two")
        #expect(svg.contains("stroke-dasharray='6 4'><title>set point 4</title>") && svg.contains("Zone &lt;cold&gt;"))
        let lone = LineChart(
            title: "t", series: [("°C", [LineChart.Point(at: 10, value: 3)])], from: 0, to: 100, ticks: [], reference: nil, unit: "°C",
            breakAfter: 1, emptyText: "none")
        #expect(lone.svgElement.contains("<circle class='reading'"))
        let none = LineChart(
            title: "t", series: [("°C", [])], from: 0, to: 100, ticks: [], reference: nil, unit: "°C", breakAfter: 1, emptyText: "no readings")
        #expect(none.svgElement.contains(">no readings</text>"))
    }
}
