import ArgumentParser
import VendControl

struct Cash: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The cash position, the cash box's collection, the change stock's fill mode, and the payout test.",
        subcommands: [Position.self, Collect.self, Fill.self, PayoutTest.self], defaultSubcommand: Position.self)

    struct Position: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Money put in (coins, bills) and where it went; what the payout devices hold.",
            discussion:
                "Sales, change paid, refunds, unknown payouts (to count in the payout devices), credit, and what a vend or payout in flight holds add up to the money put in. Below: bills in the stacker, the figures beside that sum (coins to the tubes, paid by the devices, float filled, payout tests, manual dispenses), and the tubes and hoppers."
        )

        @OptionGroup var connection: Connection

        static let labels = [
            "coins-in": "coins in", "bills-in": "bills in", "sales": "sales", "change-paid": "change paid", "refunds": "refunds",
            "unknown-payouts": "unknown payouts", "credit": "credit", "held-by-vend": "held by a vend", "payout-in-flight": "payout in flight",
            "coins-to-tubes": "of coins in: to the tubes", "dispensed": "of change and refunds: paid by the devices",
            "float-filled": "float filled (fill mode)", "test-payouts": "payout tests", "unknown-test-payouts": "payout tests unknown",
            "manually-dispensed": "paid by the changer's buttons",
        ]

        func run() throws {
            try reporting {
                try connection.show(.coins, { $0.coins }) { report in
                    guard let position = report.position else { return "this vendd does not report its cash position (upgrade it)" }
                    var text = lines(position)
                    if let bills = report.bills, !bills.isEmpty {
                        text +=
                            "\n\n"
                            + table(
                                [.left, .right, .right], header: ["bill", "count", "amount"],
                                rows: bills.map { [$0.valueText, "\($0.count)", $0.amountText] })
                    }
                    if let details = report.details { text += "\n\n" + lines(details) }
                    if let box = report.cashBox {
                        text += "\n\ncash box \(cashBoxLine(box))" + (box.coins.isEmpty && box.bills.isEmpty ? "" : "\n" + cashBoxTable(box))
                    }
                    // The devices come from `status`; without it the position above still stands.
                    if let devices = try? connection.client().send(.status).status?.payoutDevices, !devices.isEmpty {
                        text +=
                            "\n\n"
                            + table(
                                [.left, .left], header: ["payout device", "holds"],
                                rows: devices.map { device in
                                    [device.description, device.coins.map(\.text).joined(separator: ", ")]
                                })
                    }
                    return text
                }
            }
        }

        private func lines(_ lines: [CoinsReport.PositionLine]) -> String {
            table([.left, .right], header: ["", "amount"], rows: lines.map { [Self.labels[$0.item] ?? $0.item, $0.amountText] })
        }
    }

    struct Collect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record the cash box emptied (service mode): what the machine counted into it since the last collection.",
            discussion:
                "Open the door or turn the service key (or vendctl service on), take the cash box (coins and the bill stacker) out, then run this. The machine's count per coin and bill since the previous collection is saved as the collection, sent to the fleet as a cash-collected event, and printed to compare with what you count; the box counts from zero again. The change tubes and hoppers are not part of it."
        )

        @OptionGroup var connection: Connection

        func run() throws {
            try reporting {
                let response = try connection.send(.cashCollect)
                guard !connection.json else { return }
                guard let collection = response.collection else {
                    throw Failure("vendd's answer lacks the collection; is vendd older than this vendctl?", code: ExitStatus.unavailable)
                }
                if let message = response.message { print(message) }
                print(cashBoxTable(collection))
            }
        }
    }

    struct Fill: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fill mode on or off (service mode): coins put in are float for the change tubes, not credit.",
            discussion:
                "Turn the service key (or vendctl service on), then `vendctl cash fill on`, put the coins in, and `vendctl cash fill off`. Bills are returned meanwhile. Leaving service mode ends fill mode."
        )

        @OptionGroup var connection: Connection
        @Argument(help: "on or off.") var state: Sim.KeyPosition

        func run() throws { try send(.fill(on: state == .on), connection) }
    }

    struct PayoutTest: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "payout-test",
            abstract: "Have the payout devices pay an amount from their stock (service mode), and say what they paid.",
            discussion:
                "Two-phase like any payout: the intent is saved before a device is told, and an interrupted test is settled at the next start from what the devices report. The amount comes out of no credit; it is booked as a payout test. It must be a multiple of what the coins can make (exit 64 names it); more than the devices hold needs --yes, since it empties them."
        )

        @OptionGroup var connection: Connection
        @Argument(help: "The amount to pay, in the machine's currency (e.g. 500 or 1.50).") var amount: String
        @Flag(help: "Pay even if the amount is more than the devices hold (it empties them).") var yes = false
        @Option(help: ArgumentHelp("Seconds to wait for the devices to finish.", valueName: "seconds")) var wait: Int = 120

        func validate() throws {
            guard wait > 0 else { throw ValidationError("--wait must be at least 1 second") }
        }

        /// Subscribes to the events first, so the test's end cannot be missed; a test cannot
        /// overlap another payout, so the first test that ends is this one.
        func run() throws {
            try reporting {
                let watcher = try connection.client()
                do {
                    try watcher.watch(
                        timeout: .seconds(wait),
                        subscribed: {
                            let started = try connection.send(.payoutTest(amount: amount, confirmed: yes))
                            if !connection.json, let message = started.message { print(message) }
                        }
                    ) { event in
                        guard event.kind == "payout-test-ended" else { return true }
                        print(connection.json ? jsonLine(event) : event.text)
                        return false
                    }
                } catch let failure as Failure {
                    throw failure
                } catch let error as ControlClient.ConnectionError where error.kind == .notAnswering {
                    throw Failure(
                        "the payout test did not end within \(wait) s: see vendctl status and journalctl -u vendd", code: ExitStatus.temporaryFailure)
                } catch {
                    throw Failure("\(error)", code: ExitStatus.unavailable)
                }
            }
        }
    }
}

/// "12,400원 since collection #3 (2026-11-28 10:02)": what the cash box took since the last collection.
func cashBoxLine(_ box: CashBoxReport) -> String {
    let since = box.collection.map { "since collection #\($0) (\(dateText(box.since)))" } ?? "since vendd began counting (no collection yet)"
    return "\(box.totalText) \(since)"
}

/// The coins and bills per denomination, with their total.
func cashBoxTable(_ box: CashBoxReport) -> String {
    table(
        [.left, .right, .right], header: ["cash box", "count", "amount"],
        rows: box.coins.map { ["coin \($0.valueText)", "\($0.count)", $0.amountText] }
            + box.bills.map { ["bill \($0.valueText)", "\($0.count)", $0.amountText] } + [["total", "", box.totalText]])
}
