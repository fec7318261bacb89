import VendSettings
import VendYAML
import VendingCore

extension ConfigParser {
    /// `mdb:` — the MDB bus behind a Qibixx master interface, with a coin changer and/or a bill
    /// validator, each with its table of types and values.
    func parseMDB(_ section: MappingReader, currency: Currency?, format: MoneyFormat?) -> MDBSettings? {
        let port = section.string("port")
        let currencyCode = section.int("currency_code", in: 1...999, required: false)
        let poll = section.milliseconds("poll_interval_ms", in: 25...200, default: Defaults.mdbPollIntervalMilliseconds)
        let changerSection = section.nested("changer", required: false)
        let changer = changerSection.flatMap { changer -> MDBChangerSettings? in
            let coins = changer.list("coins").map { parseDenominations($0, key: "coins", currency: currency, path: changer.path.key("coins")) }
            let stall = changer.milliseconds("payout_stall_ms", in: 5_000...600_000, default: Defaults.mdbPayoutStallMilliseconds)
            changer.finish()
            guard let coins, let stall else { return nil }
            return MDBChangerSettings(coins: coins, payoutStallLimit: stall)
        }
        let billSection = section.nested("bill_validator", required: false)
        let bills = billSection.flatMap { bills -> MDBBillValidatorSettings? in
            let escrow = bills.bool("escrow", default: true)
            let list = bills.list("bills").map { parseDenominations($0, key: "bills", currency: currency, path: bills.path.key("bills")) }
            bills.finish()
            guard let escrow, let list else { return nil }
            return MDBBillValidatorSettings(bills: list, escrow: escrow)
        }
        let readerNodes = section.list("cashless", required: false)
        let readers = readerNodes.map { parseCardReaders($0, path: section.path.key("cashless")) } ?? []
        section.finish()
        if let port, !(port.hasPrefix("/") || port.hasPrefix("unix:/")) {
            sink.report(
                "'\(port)' is not a port: give the MDB interface's device path (/dev/ttyACM0, /dev/serial/by-id/…) or unix:/path/to/socket",
                at: section.value("port"), path: section.path.key("port"))
        }
        if changerSection == nil, billSection == nil, readerNodes == nil {
            sink.report("name at least one MDB device: 'changer', 'bill_validator' and/or 'cashless'", at: section.node, path: section.path)
        }
        guard let port, let currency, let poll, changerSection == nil || changer != nil, billSection == nil || bills != nil else { return nil }
        return MDBSettings(
            port: port, currency: currency, currencyNumeric: currencyCode, pollInterval: poll, changer: changer, billValidator: bills,
            cashless: readers, moneyFormat: format)
    }

    /// `- { reader: 1 }` rows: cashless #1 (10h) and/or #2 (60h), each once.
    private func parseCardReaders(_ nodes: [Node], path listPath: ConfigPath) -> [MDBCashlessSettings] {
        var readers: [MDBCashlessSettings] = []
        var seen: [CardReader: Node] = [:]
        if nodes.isEmpty {
            sink.report("list the card readers: '- reader: 1' (address 10h) and/or '- reader: 2' (60h)", at: nil as Node?, path: listPath)
        }
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "reader") } ?? "#\(index + 1)"
            guard let row = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let number = row.int("reader", in: 1...2)
            let selectionFirst = row.bool("selection_first", default: true)
            let timeout = row.milliseconds(
                "session_timeout_ms", in: 10_000...600_000, default: Int(MDBCashlessSettings.defaultSessionTimeout.wholeMilliseconds))
            row.finish()
            guard let number, let reader = CardReader(rawValue: number), let selectionFirst, let timeout, let readerNode = row.value("reader") else {
                continue
            }
            if let first = seen[reader] {
                sink.report(
                    "cashless #\(number) is already listed at line \(first.mark.line); list each reader once",
                    at: readerNode, path: row.path.key("reader"))
                continue
            }
            seen[reader] = node
            readers.append(
                MDBCashlessSettings(
                    reader: reader, selectionFirst: selectionFirst, sessionTimeout: timeout, origin: origin(of: readerNode, path: row.path)))
        }
        return readers
    }

    /// `- { type: 0, value: 10 }` rows: MDB coin or bill types 0–15, each once.
    private func parseDenominations(_ nodes: [Node], key: String, currency: Currency?, path listPath: ConfigPath) -> [MDBDenomination] {
        var rows: [MDBDenomination] = []
        var seen: [Int: Node] = [:]
        if nodes.isEmpty {
            sink.report("list at least one \(key == "coins" ? "coin" : "bill") type and its value", at: nil as Node?, path: listPath)
        }
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "type") } ?? "#\(index + 1)"
            guard let row = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let type = row.int("type", in: 0...15)
            let value = row.money("value", currency: currency)
            let enabled = row.bool("enabled", default: true)
            // Only a bill validator has security levels; on a coin the key is unknown.
            let highSecurity = key == "bills" ? row.bool("high_security", default: false) : false
            row.finish()
            if let type, let first = seen[type] {
                sink.report(
                    "type \(type) is already mapped at line \(first.mark.line); map each type once",
                    at: row.value("type"), path: row.path.key("type"))
                continue
            }
            if let type { seen[type] = node }
            guard let type, let value, let enabled, let highSecurity, let typeNode = row.value("type") else { continue }
            if value.minorUnits <= 0 {
                sink.report("a \(key == "coins" ? "coin" : "bill") is worth more than nothing", at: row.value("value"), path: row.path.key("value"))
                continue
            }
            rows.append(
                MDBDenomination(type: type, value: value, enabled: enabled, highSecurity: highSecurity, origin: origin(of: typeNode, path: row.path)))
        }
        return rows
    }
}
