import ArgumentParser
import VendControl
import VendText

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
        var table = TextTable([.left, .left, .right, .right, .right])
        table.add(["slot", "product", "price", "stock", "free"])
        for slot in status.slots {
            table.add([slot.id, slot.productName, slot.priceText, "\(slot.stock)/\(slot.capacity)", "\(slot.available)"])
        }
        lines += table.render()
        return lines.joined(separator: "\n")
    }
}
