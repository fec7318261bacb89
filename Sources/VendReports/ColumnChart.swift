/// Columns over categories (days, collections) as SVG: each category's series side by side, or
/// stacked when they are parts of one whole (a day's cash and card sales). Values are integers
/// (minor units, counts), drawn from zero (a negative one as zero); `valueText` writes one for
/// the scale and for each column's tooltip.
public struct ColumnChart: Sendable {
    public struct Category: Sendable, Equatable {
        /// Under the axis ("11-28", "#3").
        public let label: String
        /// One per series.
        public let values: [Int64]

        public init(label: String, values: [Int64]) {
            self.label = label
            self.values = values
        }
    }

    public let title: String
    public let series: [String]
    public let categories: [Category]
    public let stacked: Bool
    /// Shown instead of columns when every value is zero.
    public let emptyText: String
    public let valueText: @Sendable (Int64) -> String

    public init(
        title: String, series: [String], categories: [Category], stacked: Bool, emptyText: String,
        valueText: @escaping @Sendable (Int64) -> String
    ) {
        self.title = title
        self.series = series
        self.categories = categories
        self.stacked = stacked
        self.emptyText = emptyText
        self.valueText = valueText
    }

    static let width = 720.0
    static let height = 280.0
    static let plot = (left: 100.0, right: 705.0, top: 56.0, bottom: 236.0)

    public var svgElement: String {
        let plot = Self.plot
        var lines = SVG.header(width: Self.width, height: Self.height, title: title)
        var legendX = plot.left
        for (index, name) in series.enumerated() {
            lines.append("<rect x='\(SVG.n(legendX))' y='33' width='12' height='12' fill='\(SVG.palette[index % SVG.palette.count])'/>")
            lines.append("<text x='\(SVG.n(legendX + 16))' y='44' font-size='12' fill='#333333'>\(SVG.escape(name))</text>")
            legendX += 30 + SVG.estimatedWidth(name, fontSize: 12)
        }
        let values = categories.map { $0.values.map { max(0, $0) } }
        let tallest = values.map { stacked ? $0.reduce(0, +) : ($0.max() ?? 0) }.max() ?? 0
        let top = Scale.nice(Double(tallest))
        for tick in 0...4 {
            let value = top * Double(tick) / 4
            let y = plot.bottom - (plot.bottom - plot.top) * Double(tick) / 4
            lines.append("<line x1='\(plot.left)' y1='\(SVG.n(y))' x2='\(plot.right)' y2='\(SVG.n(y))' stroke='#dddddd'/>")
            lines.append(
                "<text x='\(SVG.n(plot.left - 6))' y='\(SVG.n(y + 4))' font-size='11' text-anchor='end' fill='#555555'>\(SVG.escape(valueText(Int64(value))))</text>"
            )
        }
        guard tallest > 0, !categories.isEmpty else {
            let middle = (plot.top + plot.bottom) / 2
            lines.append(
                "<text x='\(SVG.n((plot.left + plot.right) / 2))' y='\(SVG.n(middle))' font-size='14' text-anchor='middle' fill='#555555'>\(SVG.escape(emptyText))</text>"
            )
            return (lines + ["</svg>"]).joined(separator: "\n")
        }
        let slot = (plot.right - plot.left) / Double(categories.count)
        let barWidth = stacked ? slot * 0.7 : slot * 0.8 / Double(max(1, series.count))
        let labelEvery = max(1, Int((SVG.estimatedWidth(categories.map(\.label).max { $0.count < $1.count } ?? "", fontSize: 11) + 6) / slot) + 1)
        for (index, category) in categories.enumerated() {
            let left = plot.left + slot * Double(index)
            var base = plot.bottom
            for (part, value) in values[index].enumerated() where value > 0 {
                let height = (plot.bottom - plot.top) * Double(value) / top
                let x = stacked ? left + slot * 0.15 : left + slot * 0.1 + barWidth * Double(part)
                let y = stacked ? base - height : plot.bottom - height
                if stacked { base -= height }
                let name = part < series.count ? series[part] : ""
                lines.append(
                    "<rect class='column' x='\(SVG.n(x))' y='\(SVG.n(y))' width='\(SVG.n(barWidth))' height='\(SVG.n(height))' fill='\(SVG.palette[part % SVG.palette.count])'><title>\(SVG.escape("\(category.label) · \(name): \(valueText(value))"))</title></rect>"
                )
            }
            if index % labelEvery == 0 {
                lines.append(
                    "<text x='\(SVG.n(left + slot / 2))' y='\(SVG.n(plot.bottom + 16))' font-size='11' text-anchor='middle' fill='#333333'>\(SVG.escape(category.label))</text>"
                )
            }
        }
        lines.append("<line x1='\(plot.left)' y1='\(plot.bottom)' x2='\(plot.right)' y2='\(plot.bottom)' stroke='#888888'/>")
        lines.append("</svg>")
        return lines.joined(separator: "\n")
    }
}

/// Round numbers for a chart's scale.
enum Scale {
    /// The smallest 1, 2 or 5 × 10ⁿ at least `value` (1 for nothing to show).
    static func nice(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        var power = 1.0
        while power * 10 <= value { power *= 10 }
        while power > value { power /= 10 }
        for step in [1.0, 2, 5, 10] where step * power >= value { return step * power }
        return 10 * power
    }
}
