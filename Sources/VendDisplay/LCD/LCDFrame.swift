/// What the LCD shows of a `MachineView` (built in the LCD's style: English, ASCII names and
/// money): the credit, then the message; on four rows also what the credit buys and the standing
/// hint. `step` scrolls the lines that do not fit.
public enum LCDFrame {
    public static func rows(_ view: MachineView, columns: Int, rows: Int, step: Int) -> [String] {
        var lines: [String]
        switch view.mode {
        case .outOfOrder:
            lines = [view.message.text, view.hint ?? ""]
        case .service, .technician:
            lines = [view.message.text, view.machine]
        case .customer:
            let label = view.labels["credit"] ?? "Credit"
            let gap = max(1, columns - label.count - view.creditText.count)
            lines = [label + String(repeating: " ", count: gap) + view.creditText, view.message.text]
            if rows > 2 {
                let buys = view.slots.filter(\.affordable).map(\.name)
                lines.append(buys.isEmpty ? "" : "Buy: " + buys.joined(separator: ", "))
                lines.append(view.hint ?? view.priceNote ?? "")
            }
        }
        return (0..<rows).map { row in
            row < lines.count ? LCDText.scrolled(lines[row], width: columns, step: step) : ""
        }
    }
}
