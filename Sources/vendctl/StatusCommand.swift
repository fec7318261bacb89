import ArgumentParser
import VendControl

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the machine: state, credit, hardware and every slot.")

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            let response = try connection.send(.status)
            guard !connection.json, let status = response.status else { return }
            print(render(status))
        }
    }

    func render(_ status: StatusReport) -> String {
        var lines = [
            "\(status.machine): \(status.state)\(status.stateReason.map { " (\($0))" } ?? "")",
            "credit        \(status.creditText)\(status.acceptingCoins ? "" : " (coins inhibited)")",
            "vend          \(status.vendInProgress ?? "none in progress")",
            "coins         \(status.coinAcceptor)",
            "gpio          \(status.gpio)",
            "",
        ]
        var table = [["slot", "product", "price", "stock", "free"]]
        for slot in status.slots {
            table.append([slot.id, slot.productName, slot.priceText, "\(slot.stock)/\(slot.capacity)", "\(slot.available)"])
        }
        lines += align(table, rightAligned: [2, 3, 4])
        return lines.joined(separator: "\n")
    }
}

/// Columns padded to their widest cell; wide (East Asian) characters count as two.
func align(_ rows: [[String]], rightAligned: Set<Int>) -> [String] {
    let columns = rows.map(\.count).max() ?? 0
    let widths = (0..<columns).map { column in rows.map { column < $0.count ? cellWidth($0[column]) : 0 }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { column, cell in
            let padding = String(repeating: " ", count: widths[column] - cellWidth(cell))
            return rightAligned.contains(column) ? padding + cell : cell + padding
        }.joined(separator: "  ").trimmingTrailingSpaces()
    }
}

func cellWidth(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { width, scalar in
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFF00...0xFF60, 0xFFE0...0xFFE6: width + 2
        default: width + 1
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
