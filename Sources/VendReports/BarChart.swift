/// Horizontal bars for a terminal, drawn with the eighth-block characters so that small
/// differences still show.
public enum BarChart {
    private static let eighths = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// A bar `width` cells long for `maximum`, proportionally shorter for `value`; any value above
    /// zero shows at least a sliver.
    public static func bar(_ value: Int, maximum: Int, width: Int) -> String {
        guard value > 0, maximum > 0, width > 0 else { return "" }
        let eighthCount = max(1, Int((Double(value) / Double(maximum) * Double(width * 8)).rounded()))
        return String(repeating: "█", count: eighthCount / 8) + eighths[eighthCount % 8]
    }
}
