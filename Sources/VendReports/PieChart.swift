#if canImport(Glibc)
    import Glibc
#endif

/// Sales per product as an SVG pie chart: one slice per product, its angle proportional to its
/// value, its label inside it. A slice too thin for its name carries its legend number instead
/// (just outside the rim if too thin even for that), and the legend beside the pie names every
/// slice: its name on one line (cut with an ellipsis if it is too long, never the figures), its
/// figures and share on the next, and the total last.
public struct PieChart: Sendable {
    public struct Slice: Sendable, Equatable {
        public let label: String
        public let value: Int
        /// Shown in the legend after the label ("3 sold, 4,500원").
        public let detail: String

        public init(label: String, value: Int, detail: String) {
            self.label = label
            self.value = value
            self.detail = detail
        }
    }

    public let title: String
    public let slices: [Slice]
    /// The legend's last line ("total: 12 sold, 18,000원"); nil: none.
    public let total: String?

    /// Slices with a value of zero are left out: they have no angle.
    public init(title: String, slices: [Slice], total: String? = nil) {
        self.title = title
        self.slices = slices.filter { $0.value > 0 }
        self.total = total
    }

    static let palette = SVG.palette
    static let center = (x: 250.0, y: 270.0)
    static let radius = 200.0
    static let legendX = 490.0
    static let width = 860.0
    /// Two lines per legend entry: the name, then the figures.
    static let legendRow = 40.0

    /// The chart as a file: the XML declaration, then `svgElement`.
    public var svg: String { "<?xml version='1.0' encoding='UTF-8'?>\n" + svgElement }

    /// The chart as an element, for a page that holds it inline.
    public var svgElement: String {
        let total = slices.reduce(0) { $0 + $1.value }
        let height = max(520, 110 + Int(Self.legendRow) * slices.count + (self.total == nil ? 0 : 30))
        var lines = [
            "<svg xmlns='http://www.w3.org/2000/svg' width='860' height='\(height)' viewBox='0 0 860 \(height)' font-family='\(SVG.fontFamily)'>",
            "<rect width='100%' height='100%' fill='#ffffff'/>",
            "<text x='30' y='40' font-size='22' font-weight='bold' fill='#222222'>\(SVG.escape(title))</text>",
        ]
        lines += pie(total: total)
        let textX = Self.legendX + 24, room = Self.width - 16 - textX
        for (index, slice) in slices.enumerated() {
            let y = 110.0 + Self.legendRow * Double(index)
            let percent = percentText(slice.value, of: total)
            let name = SVG.fitted("\(index + 1). \(slice.label)", fontSize: 14, width: room)
            let figures = SVG.fitted(slice.detail.isEmpty ? percent : "\(slice.detail) · \(percent)", fontSize: 13, width: room)
            lines.append("<rect x='\(Self.legendX)' y='\(y - 13)' width='16' height='16' fill='\(Self.palette[index % Self.palette.count])'/>")
            lines.append("<text class='legend-name' x='\(textX)' y='\(y)' font-size='14' fill='#222222'>\(SVG.escape(name))</text>")
            lines.append("<text class='legend-figures' x='\(textX)' y='\(y + 17)' font-size='13' fill='#444444'>\(SVG.escape(figures))</text>")
        }
        if let text = self.total {
            let y = 110.0 + Self.legendRow * Double(slices.count) + 6
            lines.append(
                "<text class='legend-total' x='\(textX)' y='\(y)' font-size='14' font-weight='bold' fill='#222222'>\(SVG.escape(SVG.fitted(text, fontSize: 14, width: room)))</text>"
            )
        }
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The slices and their numbered labels ("no sales" when there are none): the pie on every chart.
    func pie(total: Int) -> [String] {
        guard total > 0 else {
            return ["<text x='\(Self.center.x)' y='\(Self.center.y)' font-size='18' text-anchor='middle' fill='#555555'>no sales</text>"]
        }
        var lines: [String] = []
        var start = -Double.pi / 2
        for (index, slice) in slices.enumerated() {
            let sweep = 2 * Double.pi * Double(slice.value) / Double(total)
            let color = Self.palette[index % Self.palette.count]
            lines.append(shape(from: start, sweep: sweep, color: color, title: "\(slice.label): \(slice.detail)"))
            lines.append(contentsOf: label(slice, number: index + 1, from: start, sweep: sweep, total: total, color: color))
            start += sweep
        }
        return lines
    }

    func shape(from start: Double, sweep: Double, color: String, title: String) -> String {
        let (cx, cy, r) = (Self.center.x, Self.center.y, Self.radius)
        let tooltip = "<title>\(SVG.escape(title))</title>"
        // An arc cannot start and end at the same point: a single product is a whole circle.
        guard sweep < 2 * Double.pi - 1e-9 else {
            return "<circle class='slice' cx='\(cx)' cy='\(cy)' r='\(r)' fill='\(color)' stroke='#ffffff' stroke-width='2'>\(tooltip)</circle>"
        }
        let end = start + sweep
        let d =
            "M \(n(cx)) \(n(cy)) L \(n(cx + r * cos(start))) \(n(cy + r * sin(start))) "
            + "A \(n(r)) \(n(r)) 0 \(sweep > Double.pi ? 1 : 0) 1 \(n(cx + r * cos(end))) \(n(cy + r * sin(end))) Z"
        return "<path class='slice' d='\(d)' fill='\(color)' stroke='#ffffff' stroke-width='2'>\(tooltip)</path>"
    }

    /// The first label that fits inside the slice, largest first: name and share, then the name
    /// alone, then the slice's legend number (outside the rim if even that does not fit).
    func label(_ slice: Slice, number: Int, from start: Double, sweep: Double, total: Int, color: String) -> [String] {
        // Names below 11 px are hard to read on a printed report: a number reads better.
        let candidates: [(text: [String], smallestFont: Double)] = [
            ([slice.label, percentText(slice.value, of: total)], 11), ([slice.label], 11), (["\(number)"], 9),
        ]
        let middle = start + sweep / 2
        let distances = sweep >= 2 * Double.pi - 1e-9 ? [0.0] : [0.62, 0.55, 0.7, 0.48, 0.78].map { $0 * Self.radius }
        for (text, smallestFont) in candidates {
            for fontSize in stride(from: 16.0, through: smallestFont, by: -1) {
                for distance in distances {
                    let x = Self.center.x + distance * cos(middle), y = Self.center.y + distance * sin(middle)
                    guard fits(text, fontSize: fontSize, atX: x, y: y, from: start, sweep: sweep) else { continue }
                    return textBlock(text, fontSize: fontSize, x: x, y: y, color: textColor(on: color))
                }
            }
        }
        // Not even the number fits (a sliver of a slice): it goes just outside the rim.
        let distance = Self.radius + 14
        return textBlock(
            ["\(number)"], fontSize: 12, x: Self.center.x + distance * cos(middle),
            y: Self.center.y + distance * sin(middle), color: "#222222", outside: true)
    }

    private func textBlock(_ text: [String], fontSize: Double, x: Double, y: Double, color: String, outside: Bool = false) -> [String] {
        let lineHeight = fontSize * 1.2
        let top = y - lineHeight * Double(text.count) / 2 + fontSize * 0.85
        let spans = text.enumerated().map { index, line in
            "<tspan x='\(n(x))' y='\(n(top + lineHeight * Double(index)))'>\(SVG.escape(line))</tspan>"
        }
        return [
            "<text class='label\(outside ? " outside" : "")' font-size='\(n(fontSize))' text-anchor='middle' fill='\(color)'>" + spans.joined()
                + "</text>"
        ]
    }

    /// Whether the text's bounding box, centred on (x, y), lies inside the slice.
    private func fits(_ text: [String], fontSize: Double, atX x: Double, y: Double, from start: Double, sweep: Double) -> Bool {
        let width = text.map { SVG.estimatedWidth($0, fontSize: fontSize) }.max() ?? 0
        let height = fontSize * 1.2 * Double(text.count)
        let margin = 3.0
        let corners = [(-1.0, -1.0), (1, -1), (1, 1), (-1, 1)].map { dx, dy in
            (x + dx * (width / 2 + margin), y + dy * (height / 2 + margin))
        }
        return corners.allSatisfy { px, py in
            let dx = px - Self.center.x, dy = py - Self.center.y
            guard (dx * dx + dy * dy).squareRoot() <= Self.radius - 4 else { return false }
            if sweep >= 2 * Double.pi - 1e-9 { return true }
            var angle = atan2(dy, dx) - start
            while angle < 0 { angle += 2 * Double.pi }
            while angle >= 2 * Double.pi { angle -= 2 * Double.pi }
            return angle <= sweep
        }
    }

    /// Black or white, whichever reads better on the slice's colour.
    private func textColor(on background: String) -> String {
        let hex = Array(background.dropFirst())
        let channels = stride(from: 0, to: 6, by: 2).map { Double(Int(String(hex[$0...$0 + 1]), radix: 16) ?? 0) / 255 }
        let luminance = 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
        return luminance > 0.55 ? "#1a1a1a" : "#ffffff"
    }

    func percentText(_ value: Int, of total: Int) -> String {
        SVG.fixed(100 * Double(value) / Double(total), digits: 1) + "%"
    }

    func n(_ value: Double) -> String { SVG.n(value) }
}
