import FoundationEssentials
import VendControl
import VendFleetIngest
import VendFleetStore
import VendingCore

/// A price as the operator types it: a whole number of the currency's minor units (1300 for
/// 1,300원, 150 for 1.50 €), or `default`, the machine's configured price.
enum PriceEntry: Equatable {
    case minorUnits(Int64)
    case configured

    /// The entry, or why `text` is not one.
    static func parse(_ text: String) -> Result<PriceEntry, OfficeRecords.Refusal> {
        let text = trimmed(text)
        let hint =
            "a price is a whole number of the currency's minor units (1300 for 1,300원, 150 for 1.50 €), or default for the machine's configured price"
        if text == "default" { return .success(.configured) }
        guard !text.isEmpty else { return .failure(.init(description: "no price given: \(hint)")) }
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return .failure(.init(description: "'\(text)' is not a whole number: \(hint)"))
        }
        guard let units = Int64(text), units <= Money.largestAmount else {
            return .failure(.init(description: "'\(text)' is too large: at most \(Money.largestAmount) minor units"))
        }
        guard units > 0 else { return .failure(.init(description: "a price must be at least 1 (minor unit): \(hint)")) }
        return .success(.minorUnits(units))
    }

    /// A form's field without the spaces around it.
    static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// What vendd's `price` command reads: the amount as a decimal with the currency's `digits`
    /// ("1.50" for 150 with 2 digits), or "default".
    func payloadText(currency: String, digits: Int) -> String {
        switch self {
        case .configured: "default"
        case .minorUnits(let units): Money(minorUnits: units, currency: Currency(code: currency, minorDigits: digits)).decimalString
        }
    }
}

/// The line a price change sets: list 1 for every payment unless the form names another, as
/// `vendctl price --list --payment` does; checked as vendd checks it (`PriceLineName`), and
/// whether the machine has the list is its own to say.
struct PriceLineChoice: Equatable {
    let list: Int
    let payment: String

    static let standard = PriceLineChoice(list: 1, payment: "any")

    /// The form's list (empty: 1) and payment (empty: `any`), or why not.
    static func parse(list: String, payment: String) -> Result<PriceLineChoice, OfficeRecords.Refusal> {
        let text = PriceEntry.trimmed(list)
        guard text.isEmpty || (text.count <= 3 && text.allSatisfy { $0.isASCII && $0.isNumber }), let number = text.isEmpty ? 1 : Int(text)
        else { return .failure(.init(description: "'\(text)' is not a price list: a whole number from 1 to 999 (1: the normal prices)")) }
        let payment = PriceEntry.trimmed(payment)
        switch PriceLineName.read(list: number, payment: payment.isEmpty ? nil : payment) {
        case .success(let line): return .success(PriceLineChoice(list: line.list, payment: line.scope.rawValue))
        case .failure(let problem): return .failure(.init(description: problem.reason))
        }
    }

    /// How the office names it: "list 2, cash".
    var description: String { "list \(list), \(payment == "any" ? "every payment" : payment)" }
}

/// One `price` command of a change: which slot and line, what was asked, and what became of it.
struct PriceCommandRecord: Equatable {
    enum Outcome: String {
        /// Sent; no answer recorded (the office stopped while it waited).
        case sent
        /// The machine changed the price: its answer says so.
        case done
        /// The machine refused: its answer says why.
        case refused
        /// No answer in the time allowed.
        case noAnswer = "no-answer"
        /// Not sent: the answer says why.
        case notSent = "not-sent"
    }

    let change: String
    let machine: String
    /// Empty for a machine of a product change that holds no such product.
    let slot: String
    let product: String
    /// As sent: "1300", "1.50" or "default".
    let price: String
    let currency: String
    let requestedBy: String
    let requestedAt: Int64
    var outcome: Outcome
    var answer: String
    var answeredAt: Int64?
    /// The line it sets (schema 9).
    var line = PriceLineChoice.standard

    /// "A1 → 1300", and the line when it is not list 1 for every payment: the audit log's words.
    var summary: String {
        "\(machine) \(slot) → \(price)" + (line == .standard ? "" : " (\(line.description))")
    }
}

/// What the price forms know of the machines: their latest stock reports (`machine_slots`).
enum PriceTargets {
    struct Slot: Equatable {
        let machine: String
        let slot: String
        let product: String
        let currency: String
        /// Minor digits of the machine's currency, from the prices it reports ("1.50": 2).
        let digits: Int
    }

    /// The slots of each of `machines` (none for a machine without a report), one indexed
    /// look-up per machine.
    static func slots(of machines: [String], sql: FleetSQL) throws -> [String: [Slot]] {
        var slots: [String: [Slot]] = [:]
        for machine in machines where slots[machine] == nil {
            let rows = try sql.rows("SELECT slot, product, price, currency FROM machine_slots WHERE machine = ? ORDER BY slot", [.text(machine)])
            slots[machine] = rows.compactMap { row in
                guard let slot = row[0], let product = row[1], let price = row[2].flatMap({ Amount($0) }), let currency = row[3] else { return nil }
                return Slot(machine: machine, slot: slot, product: product, currency: currency, digits: price.digits)
            }
        }
        return slots
    }

    /// For the forms: each machine with a report and its currency, and every product reported.
    static func choices(_ sql: FleetSQL) throws -> (machines: [(machine: String, currency: String)], products: [String]) {
        let machines = try sql.rows("SELECT machine, MIN(currency) FROM machine_slots GROUP BY machine ORDER BY machine", []).compactMap { row in
            row[0].map { (machine: $0, currency: row[1] ?? "") }
        }
        let products = try sql.rows("SELECT DISTINCT product FROM machine_slots ORDER BY product", []).compactMap { $0[0] }
        return (machines, products)
    }
}

/// The back office's price changes (schema version 7, the line 9): one row per command, and the
/// audit log.
extension OfficeRecords {
    /// A change's commands as sent: each row `sent` (or `not-sent` with its reason), and one
    /// audit entry naming them.
    func recordSent(_ records: [PriceCommandRecord], by actor: String, now: Int64) throws {
        try sql.transaction {
            for record in records { try insert(record) }
            let sent = records.filter { $0.outcome == .sent }.map(\.summary)
            try audit(
                actor: actor, action: "price-change-sent", detail: "change \(records.first?.change ?? ""): \(sent.joined(separator: ", "))", now: now)
        }
    }

    /// What each sent command came to, each in the audit log.
    func recordAnswers(_ records: [PriceCommandRecord], by actor: String, now: Int64) throws {
        try sql.transaction {
            for record in records {
                try sql.rows(
                    "UPDATE office_price_changes SET outcome = ?, answer = ?, answered_at = ? WHERE change_id = ? AND machine = ? AND slot = ?",
                    [
                        .text(record.outcome.rawValue), .text(record.answer), .integer(record.answeredAt), .text(record.change),
                        .text(record.machine), .text(record.slot),
                    ])
                let action = record.outcome == .done ? "price-changed" : "price-\(record.outcome.rawValue)"
                try audit(actor: actor, action: action, detail: "\(record.summary): \(record.answer)", now: now)
            }
        }
    }

    private func insert(_ record: PriceCommandRecord) throws {
        try sql.rows(
            """
            INSERT INTO office_price_changes (change_id, machine, slot, product, price, currency, requested_by, requested_at, outcome, answer, answered_at,
                price_list, payment)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(record.change), .text(record.machine), .text(record.slot), .text(record.product), .text(record.price), .text(record.currency),
                .text(record.requestedBy), .integer(record.requestedAt), .text(record.outcome.rawValue), .text(record.answer),
                .integer(record.answeredAt), .integer(Int64(record.line.list)), .text(record.line.payment),
            ])
    }

    /// The commands of `change`, by machine and slot; empty for no such change.
    func priceChange(_ change: String) throws -> [PriceCommandRecord] {
        try priceRecords("WHERE change_id = ? ORDER BY machine, slot", [.text(change)])
    }

    /// The commands of the latest changes, newest first.
    func recentPriceChanges(limit: Int) throws -> [PriceCommandRecord] {
        try priceRecords("ORDER BY requested_at DESC, change_id, machine, slot LIMIT ?", [.integer(Int64(limit))])
    }

    private func priceRecords(_ tail: String, _ parameters: [SQLValue]) throws -> [PriceCommandRecord] {
        try sql.rows(
            """
            SELECT change_id, machine, slot, product, price, currency, requested_by, requested_at, outcome, answer, answered_at, price_list, payment
            FROM office_price_changes \(tail)
            """, parameters
        ).compactMap { row in
            guard let change = row[0], let machine = row[1], let slot = row[2], let product = row[3], let price = row[4], let currency = row[5],
                let by = row[6], let at = row[7].flatMap({ Int64($0) }), let outcome = row[8].flatMap({ PriceCommandRecord.Outcome(rawValue: $0) }),
                let answer = row[9]
            else { return nil }
            return PriceCommandRecord(
                change: change, machine: machine, slot: slot, product: product, price: price, currency: currency, requestedBy: by, requestedAt: at,
                outcome: outcome, answer: answer, answeredAt: row[10].flatMap { Int64($0) },
                line: PriceLineChoice(list: row[11].flatMap { Int($0) } ?? 1, payment: row[12] ?? "any"))
        }
    }
}

extension PriceCommandRecord {
    /// The record once `reply` came back for it (`seconds`: the time the office waited).
    func answered(_ reply: MachineReply, waited seconds: Int, at now: Int64) -> PriceCommandRecord {
        var record = self
        record.answeredAt = now
        switch reply {
        case .answered(let payload):
            if let response = try? JSONDecoder().decode(ControlResponse.self, from: Data(payload)) {
                record.outcome = response.ok ? .done : .refused
                record.answer = response.ok ? response.message ?? "done" : response.error?.message ?? "refused, without a reason"
            } else {
                record.outcome = .refused
                record.answer = "an answer that is not vendd's: \(String(decoding: payload.prefix(200), as: UTF8.self))"
            }
        case .noAnswer:
            record.outcome = .noAnswer
            record.answer =
                "no answer within \(seconds) s: the machine is offline (the broker then drops the command) or slow (its events will show a price-changed)"
        case .notSent(let reason):
            record.outcome = .notSent
            record.answer = reason
        }
        return record
    }
}
