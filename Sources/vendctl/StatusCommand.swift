import ArgumentParser
import VendControl
import VendText
import VendingCore

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the machine: state, credit, hardware health and every slot.",
        discussion:
            "Each slot shows its product, the price a cash customer pays now (a time band's during a band), items in it out of its capacity, how many a customer can buy now, and when its oldest item expires. While they differ from it, list 1's price and each card reader's price are shown too, with the time band in force and until when (local time)."
    )

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            try connection.show(.status, { $0.status }, render: Self.render)
        }
    }

    static func render(_ status: StatusReport) -> String {
        let state =
            switch status.state {
            case "in-service": "in service"
            case "service-mode": "service mode"
            case "out-of-order": "OUT OF ORDER"
            default: status.state
            }
        var lines = [
            "\(status.machine): \(state)\(status.stateReason.map { " (\($0))" } ?? "")",
            "credit   \(status.creditText)\(status.acceptingCoins ? "" : " (coins inhibited)")",
            "vend     \(status.vendInProgress ?? "none in progress")",
            "coins    \(health(status.health?.coinAcceptor, fallback: status.coinAcceptor))",
            "gpio     \(health(status.health?.gpio, fallback: status.gpio))",
        ]
        if let payout = status.payoutInProgress { lines.append("payout   \(payout) in progress") }
        for device in status.payoutDevices ?? [] {
            let levels = device.coins.map(\.text).joined(separator: ", ")
            lines.append("payout   \(device.description): \(levels.isEmpty ? "empty" : levels)")
        }
        if let box = status.cashBox { lines.append("cash box \(cashBoxLine(box))") }
        if let stacker = status.billStacker {
            lines.append("bills    stacker \(stacker.bills)/\(stacker.capacity)\(stacker.full ? " FULL: empty it, bills are refused meanwhile" : "")")
        }
        for reader in status.cardReaders ?? [] {
            lines.append("card     \(reader.ready ? "ready" : "NOT READY"): \(reader.description)")
        }
        if let session = status.cardSession { lines.append("card     session open: \(session)") }
        if let check = status.ageCheck {
            lines.append(
                "age      slot \(check.slot) (\(check.age)+): "
                    + (check.approved ? "verified, waiting for the vend" : "waiting for the age verifier"))
        }
        if let band = status.priceBand {
            let name = band.name.map { " (\($0))" } ?? ""
            lines.append("prices   time band in force: list \(band.list)\(name) until \(band.untilText)")
        }
        for line in status.cardMoneyToCheck ?? [] { lines.append("card     CHECK \(line)") }
        if status.fillMode == true { lines.append("fill     FILL MODE: coins put in are float, not credit (vendctl cash fill off)") }
        if status.exactChangeOnly == true { lines.append("change   EXACT CHANGE ONLY: refill the payout devices") }
        if let outbox = status.fleetOutbox {
            let oldest = outbox.oldest.map { ", oldest \(dateText($0))" } ?? ""
            lines.append(
                "fleet    \(outbox.connected ? "connected to" : "not connected to") \(outbox.broker); \(outbox.pending) event(s) in the outbox\(oldest)"
            )
            if let awaiting = outbox.awaitingStore {
                let stored = outbox.storedSeq.map { "acknowledged up to event \($0) of \(outbox.lastSeq ?? $0)" } ?? "not heard from yet"
                lines.append("fleet    store \(stored); \(awaiting) event(s) the broker has wait for it")
            }
        }
        if let dex = status.dexPort { lines += dexLines(dex) }
        lines += zoneLines(status.zones ?? [], unit: status.temperatureUnit.flatMap(TemperatureUnit.init(rawValue:)) ?? .celsius)
        lines.append("")
        lines += slotTable(status)
        let faults = status.slots.compactMap { slot in slot.fault.map { "\(slot.id) (\($0))" } }
        if !faults.isEmpty {
            lines.append("")
            lines.append("out of service: \(faults.joined(separator: ", ")); free the spiral, then vendctl slot clear SLOT in service mode")
        }
        let expired = status.slots.compactMap { slot in slot.expired.map { "\(slot.id) (since \(dateText($0)))" } }
        if !expired.isEmpty {
            lines.append("")
            lines.append("EXPIRED, not selling: \(expired.joined(separator: ", ")); take the expired items out with vendctl unload SLOT")
        }
        if let items = status.books.discardedItems, items > 0 {
            lines.append("discarded \(items) expired item(s) so far, worth \(status.books.discardedValueText ?? "?") at their prices")
        }
        return lines.joined(separator: "\n")
    }

    /// The slots: `price` is what cash pays now; the list-1 and card columns appear only while
    /// some slot's differ from it.
    private static func slotTable(_ status: StatusReport) -> [String] {
        let showsList = status.slots.contains { $0.listPrice != nil }
        let showsCards = status.slots.contains { $0.cardPrices != nil || $0.sessionPrice != nil }
        var table = TextTable(
            [.left, .left, .right] + (showsList ? [.right] : []) + (showsCards ? [.left] : []) + [.right, .right, .left])
        table.add(
            ["slot", "product", "price"] + (showsList ? ["list 1"] : []) + (showsCards ? ["by card"] : []) + ["stock", "free", "earliest expiry"])
        for slot in status.slots {
            var cards = (slot.cardPrices ?? []).map { "\($0.payment) \($0.priceText)" }
            if let session = slot.sessionPriceText { cards.append("this card \(session)") }
            table.add(
                [slot.id, slot.productName, slot.priceText] + (showsList ? [slot.listPriceText ?? ""] : [])
                    + (showsCards ? [cards.joined(separator: ", ")] : [])
                    + ["\(slot.stock)/\(slot.capacity)", "\(slot.available)", dateText(slot.earliestExpiry)])
        }
        return table.render()
    }

    /// A fault shows what the component last reported; JSON carries the notice either way.
    private static func health(_ component: StatusReport.Health.Component?, fallback: String) -> String {
        guard let component else { return fallback }
        guard !component.ok else { return "ok: " + component.description }
        return "FAULT: \(component.description)" + (component.notice.map { ": \($0) (\(dateText(component.noticeAt)))" } ?? "")
    }
}

extension StatusReport.CoinLevel {
    /// "22 × 500원"; "? × 100원" for a hopper that cannot count, with its level sensors if it has
    /// them: "? × 100원 (level low)".
    var text: String { "\(count.map(String.init) ?? "?") × \(valueText)\(level.map { " (level \($0))" } ?? "")" }
}
