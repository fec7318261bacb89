import Foundation
import Testing

@testable import VendReports

@Suite struct PieChartTests {
    /// The slices' `d` attributes: "M cx cy L x0 y0 A r r 0 large 1 x1 y1 Z".
    static func sweeps(_ svg: String) -> [Double] {
        svg.components(separatedBy: "<path class='slice' d='").dropFirst().map { rest in
            let numbers = rest.prefix { $0 != "'" }.split(separator: " ").compactMap { Double($0) }
            let (cx, cy, x0, y0, x1, y1) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[9], numbers[10])
            var sweep = atan2(y1 - cy, x1 - cx) - atan2(y0 - cy, x0 - cx)
            if sweep <= 0 { sweep += 2 * .pi }
            return sweep
        }
    }

    @Test func slicesAreProportionalAndStartAtTheTop() {
        let chart = PieChart(
            title: "t",
            slices: [
                .init(label: "a", value: 3, detail: ""), .init(label: "b", value: 1, detail: ""),
                .init(label: "c", value: 0, detail: ""),
            ])
        let svg = chart.svg
        let sweeps = Self.sweeps(svg)
        #expect(sweeps.count == 2)
        #expect(abs(sweeps[0] - 1.5 * .pi) < 1e-3)
        #expect(abs(sweeps[1] - 0.5 * .pi) < 1e-3)
        #expect(svg.contains("d='M 250.00 270.00 L 250.00 70.00 A 200.00 200.00 0 1 1"))
    }

    @Test func oneProductIsAWholeCircleWithItsLabelInTheMiddle() {
        let svg = PieChart(title: "t", slices: [.init(label: "Cola", value: 2, detail: "2 sold")]).svg
        #expect(svg.contains("<circle class='slice' cx='250.0' cy='270.0' r='200.0'"))
        #expect(svg.contains("<tspan x='250.00'"))
    }

    @Test func aThinSliceCarriesItsLegendNumber() {
        let svg = PieChart(
            title: "t",
            slices: [
                .init(label: "Very Long Product Name", value: 20, detail: ""),
                .init(label: "Another Long Product Name", value: 1, detail: ""),
            ]
        ).svg
        #expect(svg.contains(">Very Long Product Name</tspan>"))
        #expect(svg.contains(">2</tspan>"))
        #expect(svg.contains("2. Another Long Product Name"))
    }

    @Test func aSliceTooThinEvenForItsNumberHasItJustOutside() {
        let svg = PieChart(title: "t", slices: [.init(label: "a", value: 1_000, detail: ""), .init(label: "b", value: 1, detail: "")]).svg
        let label = svg.components(separatedBy: "\n").first { $0.contains(">2</tspan>") }
        #expect(label?.contains("class='label outside'") == true)
    }

    @Test func textIsEscaped() {
        let svg = PieChart(title: "<Sales & more>", slices: [.init(label: "Tom's", value: 1, detail: "\"1\"")]).svg
        #expect(svg.contains("&lt;Sales &amp; more&gt;"))
        #expect(svg.contains("Tom&apos;s"))
        #expect(!svg.contains("Tom's"))
    }

    /// The legend's lines, as the SVG's text elements of a class.
    static func legend(_ svg: String, _ kind: String) -> [String] {
        svg.components(separatedBy: "\n").filter { $0.contains("class='legend-\(kind)'") }.map {
            String($0.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" })
        }
    }

    @Test func aLongNameIsCutNeverTheFigures() {
        let long = "Extra Large Limited Edition Strawberry Banana Milk With Real Fruit Pieces"
        let svg = PieChart(
            title: "t",
            slices: [.init(label: long, value: 3, detail: "3 sold, 4,500원"), .init(label: "Cola", value: 1, detail: "1 sold, 1,500원")],
            total: "total: 4 sold, 6,000원"
        ).svg
        let names = Self.legend(svg, "name")
        #expect(names.count == 2)
        #expect(names[0].hasPrefix("1. Extra Large Limited") && names[0].hasSuffix("…") && names[0].count < long.count, "\(names)")
        #expect(names[1] == "2. Cola")
        #expect(Self.legend(svg, "figures") == ["3 sold, 4,500원 · 75.0%", "1 sold, 1,500원 · 25.0%"])
        #expect(Self.legend(svg, "total") == ["total: 4 sold, 6,000원"])
    }
}
