/// Readings over time as SVG lines (a zone's temperatures): one line per series, broken where
/// readings are further apart than `breakAfter` (a machine offline draws no line across its
/// silence), and an optional dashed reference (the set point).
public struct LineChart: Sendable {
    public struct Point: Sendable, Equatable {
        /// Milliseconds since the Unix epoch.
        public let at: Int64
        public let value: Double

        public init(at: Int64, value: Double) {
            self.at = at
            self.value = value
        }
    }

    public struct Tick: Sendable, Equatable {
        public let at: Int64
        public let label: String

        public init(at: Int64, label: String) {
            self.at = at
            self.label = label
        }
    }

    public let title: String
    public let series: [(label: String, points: [Point])]
    public let from: Int64
    public let to: Int64
    /// Under the time axis (local midnights, with the caller's labels).
    public let ticks: [Tick]
    public let reference: (label: String, value: Double)?
    /// After each value on the scale ("°C").
    public let unit: String
    public let breakAfter: Int64
    public let emptyText: String

    public init(
        title: String, series: [(label: String, points: [Point])], from: Int64, to: Int64, ticks: [Tick],
        reference: (label: String, value: Double)?, unit: String, breakAfter: Int64, emptyText: String
    ) {
        self.title = title
        self.series = series
        self.from = from
        self.to = max(to, from + 1)
        self.ticks = ticks
        self.reference = reference
        self.unit = unit
        self.breakAfter = breakAfter
        self.emptyText = emptyText
    }

    static let width = 720.0
    static let height = 260.0
    static let plot = (left: 64.0, right: 705.0, top: 48.0, bottom: 220.0)

    public var svgElement: String {
        let plot = Self.plot
        var lines = SVG.header(width: Self.width, height: Self.height, title: title)
        let shown = series.map { ($0.label, $0.points.filter { $0.at >= from && $0.at <= to && $0.value.isFinite }) }
        let values = shown.flatMap { $0.1.map(\.value) } + (reference.map { [$0.value] } ?? [])
        guard let low = values.min(), let high = values.max(), shown.contains(where: { !$0.1.isEmpty }) else {
            lines.append(
                "<text x='\(SVG.n((plot.left + plot.right) / 2))' y='\(SVG.n((plot.top + plot.bottom) / 2))' font-size='14' text-anchor='middle' fill='#555555'>\(SVG.escape(emptyText))</text>"
            )
            return (lines + ["</svg>"]).joined(separator: "\n")
        }
        let step = Scale.nice(max(high - low, 1) / 4)
        let bottom = (low / step).rounded(.down) * step
        let top = max((high / step).rounded(.up) * step, bottom + step)
        func y(_ value: Double) -> Double { plot.bottom - (plot.bottom - plot.top) * (value - bottom) / (top - bottom) }
        func x(_ at: Int64) -> Double { plot.left + (plot.right - plot.left) * Double(at - from) / Double(to - from) }
        var value = bottom
        while value <= top + step / 2 {
            lines.append("<line x1='\(plot.left)' y1='\(SVG.n(y(value)))' x2='\(plot.right)' y2='\(SVG.n(y(value)))' stroke='#dddddd'/>")
            let text = SVG.fixed(value, digits: step < 1 ? 1 : 0) + " " + unit
            lines.append(
                "<text x='\(SVG.n(plot.left - 6))' y='\(SVG.n(y(value) + 4))' font-size='11' text-anchor='end' fill='#555555'>\(SVG.escape(text))</text>"
            )
            value += step
        }
        for tick in ticks where tick.at >= from && tick.at <= to {
            lines.append("<line x1='\(SVG.n(x(tick.at)))' y1='\(plot.top)' x2='\(SVG.n(x(tick.at)))' y2='\(plot.bottom)' stroke='#eeeeee'/>")
            lines.append(
                "<text x='\(SVG.n(x(tick.at)))' y='\(SVG.n(plot.bottom + 16))' font-size='11' text-anchor='middle' fill='#333333'>\(SVG.escape(tick.label))</text>"
            )
        }
        if let reference {
            lines.append(
                "<line class='reference' x1='\(plot.left)' y1='\(SVG.n(y(reference.value)))' x2='\(plot.right)' y2='\(SVG.n(y(reference.value)))' stroke='#a40000' stroke-dasharray='6 4'><title>\(SVG.escape(reference.label))</title></line>"
            )
        }
        var legendX = plot.left
        for (index, (label, points)) in shown.enumerated() {
            let color = SVG.palette[index % SVG.palette.count]
            lines.append("<rect x='\(SVG.n(legendX))' y='31' width='12' height='4' fill='\(color)'/>")
            lines.append("<text x='\(SVG.n(legendX + 16))' y='37' font-size='12' fill='#333333'>\(SVG.escape(label))</text>")
            legendX += 30 + SVG.estimatedWidth(label, fontSize: 12)
            var run: [Point] = []
            func draw() {
                guard !run.isEmpty else { return }
                let coordinates = run.map { "\(SVG.n(x($0.at))),\(SVG.n(y($0.value)))" }.joined(separator: " ")
                lines.append(
                    run.count == 1
                        ? "<circle class='reading' cx='\(SVG.n(x(run[0].at)))' cy='\(SVG.n(y(run[0].value)))' r='2' fill='\(color)'/>"
                        : "<polyline class='reading' points='\(coordinates)' fill='none' stroke='\(color)' stroke-width='2'/>")
                run = []
            }
            for point in points.sorted(by: { $0.at < $1.at }) {
                if let last = run.last, point.at - last.at > breakAfter { draw() }
                run.append(point)
            }
            draw()
        }
        lines.append("</svg>")
        return lines.joined(separator: "\n")
    }
}
