import MDB
import VendHardware
import VendSettings
import VendingCore

/// The bill validator (30h) driver: bills go to escrow, and are stacked only when the machine
/// says it can take them (`shouldStack`, asked for each bill), else returned; a bill is credited
/// when the validator reports it STACKED, never on escrow (§6.2 POLL note 2).
final class MDBBillValidator: MDBPeripheralDriver {
    let peripheral = MDBPeripheral.billValidator
    let nonResponseTime: Duration = .seconds(5)
    /// After ESCROW the validator reports STACKED, RETURNED or INVALID ESCROW within 30 s (§6.2).
    static let escrowAnswerTime: Duration = .seconds(30)

    private let settings: MDBBillValidatorSettings
    private let currency: Currency
    private let currencyNumeric: Int?
    private let source: String
    private let emit: MDBEventHandler
    private let wantsAcceptance: () -> Bool
    private let shouldStack: (Money) -> Bool
    private var sequence: UInt64

    /// How amounts read in its notices: the machine's money format.
    private let format: MoneyFormat
    private var values: [Int: Money] = [:]
    private var escrowCapable = false
    private var stackerFull = false
    private var stackerCapacity = 0
    private var applied: Bool?
    /// The bill told to stack or return, since when, and the stacker's count before it: its
    /// outcome is awaited.
    private var decided: (type: Int, stack: Bool, at: ContinuousClock.Instant, stackerBefore: Int?)?
    /// Bills in the stacker at its last STACKER read.
    private var stackerBills: Int?
    private var lastRepeatingStatus: BillStatus?

    init(
        settings: MDBBillValidatorSettings, currency: Currency, format: MoneyFormat? = nil, currencyNumeric: Int?, source: String,
        lastSequence: UInt64?, emit: @escaping MDBEventHandler, wantsAcceptance: @escaping () -> Bool, shouldStack: @escaping (Money) -> Bool
    ) {
        self.settings = settings
        self.currency = currency
        self.format = format ?? .plain(currency)
        self.currencyNumeric = currencyNumeric
        self.source = source
        self.emit = MDBEvent.naming("bill validator", emit)
        self.wantsAcceptance = wantsAcceptance
        self.shouldStack = shouldStack
        sequence = lastSequence ?? 0
    }

    func isJustReset(_ poll: [UInt8]) -> Bool { BillActivity.parse(poll).contains(.status(.justReset)) }

    // MARK: - Initialisation (§6.6)

    func initialise(_ bus: MDBDeviceBus) throws(MDBFailure) {
        applied = nil
        let setup = try bus.request(BillCommand.setup.block, BillSetup.init)
        escrowCapable = setup.escrowCapable
        values = checkedValues(setup)
        // Only when the table asks for it: SECURITY sets every other type to the normal level.
        let highSecurity = settings.bills.filter { $0.highSecurity && values[$0.type] != nil }.map(\.type)
        if !highSecurity.isEmpty { _ = try bus.send(BillCommand.security(highSecurity: highSecurity).block) }
        let id = try? bus.request(BillCommand.identification.block) { (bytes) throws(MDBDecodeError) in
            try PeripheralIdentification(bytes, withFeatures: false)
        }
        stackerCapacity = Int(setup.stackerCapacity)
        let stacker = try bus.request(BillCommand.stacker.block, StackerStatus.init)
        stackerFull = stacker.full
        settleDecidedAcrossReset(stackerNow: stacker.bills)
        stackerBills = stacker.bills
        emit(.stacker(StackerLevel(bills: stacker.bills, capacity: stackerCapacity, full: stacker.full)))
        emit(
            .notice(
                "bill validator: \(id.map { $0.summary + ", " } ?? "")level \(setup.level), \(setup.currency), scaling \(setup.scalingFactor), bills \(values.keys.sorted().map { "\($0)=\(format.string(for: values[$0]!))" }.joined(separator: " ")), escrow \(escrowCapable && settings.escrow ? "on" : "off"), \(highSecurity.isEmpty ? "security levels as the validator keeps them" : "high security for types \(highSecurity.sorted().map(String.init).joined(separator: " "))"), stacker \(stacker.bills)/\(setup.stackerCapacity)\(stacker.full ? " FULL" : "")",
                isFault: stacker.full))
        if settings.escrow, !escrowCapable {
            emit(
                .notice(
                    "the bill validator cannot hold bills in escrow: bills are stacked and credited even when the machine cannot sell", isFault: true)
            )
        }
        try applyAcceptance(bus)
    }

    /// The bill told to stack or return when the validator was reset (by itself, or by the bus
    /// reset after a lost interface): its report went with the reset. RESET returns an escrowed
    /// bill (§6.2), so only a bill told to stack is in doubt: one more bill in the stacker proves
    /// it stacked.
    private func settleDecidedAcrossReset(stackerNow: Int) {
        guard let decided else { return }
        self.decided = nil
        guard decided.stack else { return }
        if let before = decided.stackerBefore, stackerNow == before + 1, let value = values[decided.type] {
            emit(
                .notice(
                    "the bill validator reset while stacking a bill of type \(decided.type): the stacker holds one more bill, so it is credited",
                    isFault: true))
            credit(value)
        } else {
            emit(
                .notice(
                    "the bill validator reset while stacking a bill of type \(decided.type): if it was stacked it is NOT credited; count the cash box",
                    isFault: true))
        }
    }

    /// The table's types whose value SETUP confirms; the others are refused, loudly.
    private func checkedValues(_ setup: BillSetup) -> [Int: Money] {
        let (values, refusals) = settings.bills.confirmed(
            by: setup.currency, expectedNumeric: currencyNumeric, machineCurrency: currency,
            wording: MDBTableWording(device: "bill validator", item: "bill"), reportedValue: setup.value(ofType:))
        for refusal in refusals { emit(.notice(refusal, isFault: true)) }
        return values
    }

    // MARK: - Polling

    func tick(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        // Full, bills are refused until someone empties it: look for that.
        if stackerFull { try checkStacker(bus) }
        try applyAcceptance(bus)
        if let decided, bus.timekeeper.now - decided.at > Self.escrowAnswerTime {
            emit(
                .notice(
                    "the bill validator did not report the bill of type \(decided.type) \(decided.stack ? "stacked" : "returned") within 30 s",
                    isFault: true))
            self.decided = nil
        }
        guard case .data(let bytes) = try bus.send(BillCommand.poll.block) else {
            lastRepeatingStatus = nil
            return false
        }
        for activity in BillActivity.parse(bytes) {
            if activity == .status(.justReset) { return true }
            try handle(activity, bus)
        }
        return false
    }

    private func handle(_ activity: BillActivity, _ bus: MDBDeviceBus) throws(MDBFailure) {
        switch activity {
        case .bill(let type, .escrowPosition):
            let value = values[type]
            let stack = value.map(shouldStack) ?? false
            // Decided before it goes out: a link lost before its answer leaves the bill awaited,
            // settled from the stacker when the validator is back.
            decided = (type, stack, bus.timekeeper.now, stackerBills)
            _ = try bus.send(BillCommand.escrow(stack: stack).block)
            emit(
                .notice(
                    "bill of type \(type) (\(value.map(format.string(for:)) ?? "not in the table")) in escrow: \(stack ? "stacking it" : "returning it (the machine cannot take it now)")",
                    isFault: false))
        case .bill(let type, .stacked), .bill(let type, .toRecycler):
            decided = nil
            guard let value = values[type] else {
                emit(
                    .notice(
                        "a bill of type \(type) was stacked but is not in mdb.bill_validator.bills (or disagrees with the validator): NOT credited. Map the type or disable it",
                        isFault: true))
                return
            }
            credit(value)
            try checkStacker(bus)
        case .bill(let type, let routing):
            if routing == .returned { decided = nil }
            emit(
                .notice(
                    "bill of type \(type)\(typeValue(type)) \(routing.name)\(routing == .disabledBillRejected ? disabledNote(type) : "")",
                    isFault: false))
        case .status(let status):
            guard status != lastRepeatingStatus else { return }
            if status == .validatorDisabled || status == .validatorBusy { lastRepeatingStatus = status }
            if status == .invalidEscrowRequest { decided = nil }
            // Disabled is what vendd asked for while the machine cannot sell: not worth a line then.
            if status == .validatorDisabled, applied == false { return }
            emit(.notice(status.name, isFault: status.isFault))
        case .insertedWhileDisabled(let count):
            emit(.notice("\(count) bill(s) offered while the validator was disabled", isFault: false))
        case .unknown(let byte):
            emit(.notice("undefined POLL byte \(byte)", isFault: true))
        }
    }

    /// " (1,000원)": a type's value, from the table; nothing when unknown.
    private func typeValue(_ type: Int) -> String {
        let value = values[type] ?? settings.bills.first { $0.type == type }?.value
        return value.map { " (\(format.string(for: $0)))" } ?? ""
    }

    /// Why a configured type is refused: its row says `enabled: false`.
    private func disabledNote(_ type: Int) -> String {
        guard let row = settings.bills.first(where: { $0.type == type && !$0.enabled }) else { return "" }
        return ": \(row.origin.path) is enabled: false (\(row.origin.location))"
    }

    private func credit(_ value: Money) {
        sequence += 1
        emit(.billStacked(value: value, event: CoinEventID(source: source, sequence: sequence)))
    }

    private func checkStacker(_ bus: MDBDeviceBus) throws(MDBFailure) {
        let stacker = try bus.request(BillCommand.stacker.block, StackerStatus.init)
        stackerBills = stacker.bills
        emit(.stacker(StackerLevel(bills: stacker.bills, capacity: stackerCapacity, full: stacker.full)))
        guard stacker.full != stackerFull else { return }
        stackerFull = stacker.full
        emit(
            .notice(
                stacker.full ? "bill stacker FULL (\(stacker.bills) bills): bills refused until it is emptied" : "bill stacker emptied",
                isFault: stacker.full))
    }

    var hasWorkInProgress: Bool { false }

    func stillOffline(_ now: ContinuousClock.Instant) {}

    func lost() {
        applied = nil
        lastRepeatingStatus = nil
    }

    private func applyAcceptance(_ bus: MDBDeviceBus) throws(MDBFailure) {
        let wanted = wantsAcceptance() && !stackerFull
        guard applied != wanted else { return }
        let accept = wanted ? settings.bills.filter { $0.enabled && values[$0.type] != nil }.map(\.type) : []
        let escrow = settings.escrow && escrowCapable ? accept : []
        _ = try bus.send(BillCommand.billType(accept: accept, escrow: escrow).block)
        applied = wanted
    }
}
