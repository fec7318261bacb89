/// The chart for a page that draws the legend itself, in its own type size: the kiosk's
/// technician screen, where the SVG is scaled to fit beside the stock table and a legend inside
/// it would be too small to read.
extension PieChart {
    /// One line of the legend: the slice's number, label, detail, share and colour, as the
    /// chart's own legend shows them.
    public struct LegendEntry: Codable, Sendable, Equatable {
        public let number: Int
        public let label: String
        public let detail: String
        /// "37.5%"
        public let share: String
        /// The slice's fill, "#4e79a7".
        public let color: String
    }

    public var legend: [LegendEntry] {
        let total = slices.reduce(0) { $0 + $1.value }
        return slices.enumerated().map { index, slice in
            LegendEntry(
                number: index + 1, label: slice.label, detail: slice.detail, share: percentText(slice.value, of: total),
                color: Self.palette[index % Self.palette.count])
        }
    }

    /// The pie alone, its slices and their labels: no title and no legend (the page shows them).
    public var svgWithoutLegend: String {
        let total = slices.reduce(0) { $0 + $1.value }
        // The pie and a margin for the numbers just outside its rim.
        let margin = 30.0
        let (left, top, side) = (Self.center.x - Self.radius - margin, Self.center.y - Self.radius - margin, 2 * (Self.radius + margin))
        var lines = [
            "<?xml version='1.0' encoding='UTF-8'?>",
            "<svg xmlns='http://www.w3.org/2000/svg' width='\(n(side))' height='\(n(side))' viewBox='\(n(left)) \(n(top)) \(n(side)) \(n(side))' font-family='\(SVG.fontFamily)'>",
            "<rect x='\(n(left))' y='\(n(top))' width='100%' height='100%' fill='#ffffff'/>",
        ]
        lines += pie(total: total)
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }
}
