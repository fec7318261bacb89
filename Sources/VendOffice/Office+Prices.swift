import FoundationEssentials
import VendFleetIngest
import VendFleetStore
import VendHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// Remote prices (operators only): a form's change becomes one vendd `price` command per slot,
/// sent at once through the broker; the office waits for the machines' answers (at most
/// `commandTimeout`), records each in `office_price_changes` and the audit log, and shows them.
extension Office {
    func pricesPage(state: State, user: OfficeUser, csrf: String, error: String?) throws -> HTTPResponse {
        let page = Pages.prices(
            choices: try PriceTargets.choices(state.sql), routes: try state.records.routes(),
            recent: try state.records.recentPriceChanges(limit: 200),
            connected: commands?.isConnected, waitSeconds: Int(commandTimeout.components.seconds), user: user, csrf: csrf, error: error)
        return respond(error == nil ? 200 : 400, page)
    }

    func priceChangePage(_ change: String, state: State, user: OfficeUser, csrf: String) throws -> HTTPResponse {
        let records = try state.records.priceChange(change)
        guard !records.isEmpty else {
            return respond(404, Pages.message("No such price change", "There is no price change by that id.", user: user, csrf: csrf))
        }
        return respond(200, Pages.priceChange(records, amounts: amounts, user: user, csrf: csrf))
    }

    /// The commands of a price change, recorded sent: `send` waits for their answers outside
    /// the office's lock, so that other pages are served meanwhile.
    struct PriceChangeOrder {
        let sending: [PriceCommandRecord]
        let user: String
    }

    /// Plans the form's change and records it sent; the answer is the change's page, shown once
    /// `send(_:)` has the machines' answers (or an error page, and no order).
    func changePrices(
        _ request: HTTPRequest, state: State, user: OfficeUser, csrf: String, now: Int64, order: inout PriceChangeOrder?
    ) throws -> HTTPResponse {
        let form = request.form
        let planned: [PriceCommandRecord]
        do {
            let entry = try PriceEntry.parse(form["price"] ?? "").get()
            let line = try PriceLineChoice.parse(list: form["list"] ?? "", payment: form["payment"] ?? "").get()
            let change = Sodium.randomToken(bytes: 8)
            if request.path == "/prices/slot" {
                let machine = form["machine"] ?? ""
                planned = try Self.slotChange(
                    machine, slot: form["slot"] ?? "", entry, slots: try PriceTargets.slots(of: [machine], sql: state.sql)[machine] ?? [],
                    change: change, by: user.name, now: now
                ).map { $0.setting(line) }
            } else {
                let route = form["route"] ?? ""
                let machines: [String]
                if route.isEmpty {
                    machines = request.formValues("machine")
                } else {
                    guard let found = try state.records.route(named: route) else {
                        throw OfficeRecords.Refusal(description: "there is no route '\(route)'")
                    }
                    machines = found.machines
                }
                planned = try Self.productChange(
                    form["product"] ?? "", machines: machines, entry, slots: try PriceTargets.slots(of: machines, sql: state.sql), change: change,
                    by: user.name, now: now
                ).map { $0.setting(line) }
            }
        } catch let refusal as OfficeRecords.Refusal {
            return try pricesPage(state: state, user: user, csrf: csrf, error: refusal.description)
        }
        guard commands != nil else {
            return try pricesPage(state: state, user: user, csrf: csrf, error: "this vendstore has no broker connection for commands")
        }
        try state.records.recordSent(planned, by: user.name, now: now)
        order = PriceChangeOrder(sending: planned.filter { $0.outcome == .sent }, user: user.name)
        return redirect("/price-change?id=\(planned[0].change)")
    }

    /// Sends an order's commands and waits (at most `commandTimeout`, holding no lock), then
    /// records each machine's answer.
    func send(_ order: PriceChangeOrder) throws {
        guard let commands else { return }
        let replies = commands.send(
            order.sending.map { record in
                MachineCommand(machine: record.machine, name: "price", payload: PriceCommandPayload(record, sender: "office:\(order.user)").json)
            }, within: commandTimeout)
        let answeredAt = clock()
        let seconds = Int(commandTimeout.components.seconds)
        let answers = zip(order.sending, replies).map { $0.answered($1, waited: seconds, at: answeredAt) }
        try state.withLock { try $0.records.recordAnswers(answers, by: order.user, now: answeredAt) }
        for answer in answers where answer.outcome != .done {
            logger.warning(
                "office: \(order.user)'s price \(answer.price) for \(answer.machine) \(answer.slot): \(answer.outcome.rawValue): \(answer.answer)")
        }
    }

    /// One slot of one machine the store has a stock report from (its currency); the slot need
    /// not be in that report: the machine itself says whether it has it.
    static func slotChange(
        _ machine: String, slot: String, _ entry: PriceEntry, slots: [PriceTargets.Slot], change: String, by user: String, now: Int64
    ) throws -> [PriceCommandRecord] {
        guard let any = slots.first else {
            throw OfficeRecords.Refusal(
                description: "the store has no stock report from machine '\(machine)': it knows neither its slots nor its currency")
        }
        guard (1...32).contains(slot.count), slot.allSatisfy({ !$0.isWhitespace && !($0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } ?? false) }) else {
            throw OfficeRecords.Refusal(description: "'\(slot)' is not a slot: 1 to 32 characters without spaces, as A1")
        }
        let product = slots.first { $0.slot == slot }?.product ?? ""
        return [
            PriceCommandRecord(
                change: change, machine: machine, slot: slot, product: product, price: entry.payloadText(currency: any.currency, digits: any.digits),
                currency: any.currency, requestedBy: user, requestedAt: now, outcome: .sent, answer: "")
        ]
    }

    /// Every slot holding `product` on the machines given (a machine holding none is recorded
    /// not sent); the machines must share one currency, as one number of minor units is meant.
    static func productChange(
        _ product: String, machines: [String], _ entry: PriceEntry, slots reported: [String: [PriceTargets.Slot]], change: String, by user: String,
        now: Int64
    ) throws -> [PriceCommandRecord] {
        guard !machines.isEmpty else { throw OfficeRecords.Refusal(description: "tick at least one machine, or choose a route") }
        guard reported.values.contains(where: { $0.contains { $0.product == product } }) else {
            throw OfficeRecords.Refusal(description: "none of the machines chosen holds a product '\(product)': choose one from the list")
        }
        var seen: Set<String> = []
        var records: [PriceCommandRecord] = []
        var currencies: [String: [String]] = [:]
        for machine in machines where seen.insert(machine).inserted {
            let slots = reported[machine] ?? []
            guard let any = slots.first else {
                throw OfficeRecords.Refusal(
                    description: "the store has no stock report from machine '\(machine)': it knows neither its slots nor its currency")
            }
            let holding = slots.filter { $0.product == product }
            if holding.isEmpty {
                records.append(
                    PriceCommandRecord(
                        change: change, machine: machine, slot: "", product: product,
                        price: entry.payloadText(currency: any.currency, digits: any.digits),
                        currency: any.currency, requestedBy: user, requestedAt: now, outcome: .notSent,
                        answer: "no slot of this machine holds \(product)",
                        answeredAt: now))
                continue
            }
            currencies[any.currency, default: []].append(machine)
            for slot in holding {
                records.append(
                    PriceCommandRecord(
                        change: change, machine: machine, slot: slot.slot, product: product,
                        price: entry.payloadText(currency: slot.currency, digits: slot.digits), currency: slot.currency, requestedBy: user,
                        requestedAt: now,
                        outcome: .sent, answer: ""))
            }
        }
        guard currencies.count <= 1 else {
            let listed = currencies.keys.sorted().map { "\($0): \(currencies[$0, default: []].joined(separator: ", "))" }.joined(separator: "; ")
            throw OfficeRecords.Refusal(
                description: "these machines count in different currencies (\(listed)): change each currency's machines apart")
        }
        return records
    }
}

/// vendd's `price` command (docs/mqtt.md): the slot and amount, and the line only when it is not
/// list 1 for every payment, so that a machine before lists reads what it always did.
struct PriceCommandPayload: Encodable {
    let sender: String
    let slot: String
    let price: String
    let list: Int?
    let payment: String?

    init(_ record: PriceCommandRecord, sender: String) {
        self.sender = sender
        slot = record.slot
        price = record.price
        let standard = record.line == .standard
        list = standard ? nil : record.line.list
        payment = standard ? nil : record.line.payment
    }

    /// Strings and a small integer: encoding cannot fail.
    var json: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? Array(encoder.encode(self))) ?? []
    }
}

extension PriceCommandRecord {
    /// The record, setting `line` instead of list 1 for every payment.
    func setting(_ line: PriceLineChoice) -> PriceCommandRecord {
        var record = self
        record.line = line
        return record
    }
}
