import MDB
import SimulatedMDB
import Synchronization
import VendControl
import VendDrivers
import VendHardware
import VendPOSIX
import VendSerial
import VendSettings
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The MDB devices of `vendd run --simulate`: the configured changer, bill validator and card
/// readers, written from the specification (SimulatedMDB), behind a simulated Qibixx interface at
/// the far end of an in-process socket pair. vendd's real MDB driver runs on the near end, so
/// everything above the wire is what a machine runs. The changer's tubes are kept in the state
/// directory, as a real changer keeps its coins when vendd restarts.
final class InProcessMDB: Sendable {
    let interface: SimulatedQibixxInterface
    private let settings: MDBSettings
    private let tubesFile: SimulatedDeviceMemory
    /// The counts last written to `tubesFile`.
    private let keptTubes: Mutex<[Int]?>

    /// A simulated changer starts with this many coins of each type in its tubes, so that it
    /// can give change from the first sale.
    static let initialTubeCount = 20
    /// Each coin of a payout leaves its tube this long after the last, as a changer's motor pays.
    static let coinInterval: Duration = .milliseconds(60)

    init(settings: MDBSettings, stateDirectory: String) throws(SimulatedDeviceMemory.Unreadable) {
        self.settings = settings
        tubesFile = SimulatedDeviceMemory(path: "\(stateDirectory)/simulated-changer-tubes.txt", device: "simulated MDB changer")
        let changer = SimulatedChanger()
        keptTubes = Mutex(try tubesFile.recall { fields in Self.tubeCounts(fields) })
        if let coins = settings.changer?.coins {
            changer.setup = Self.changerSetup(coins, settings)
            changer.clock = { ContinuousClock.now }
            changer.faults.coinInterval = Self.coinInterval
            let saved = keptTubes.withLock { $0 }
            for coin in coins where coin.type < changer.tubes.count {
                changer.tubes[coin.type] = saved?[coin.type] ?? Self.initialTubeCount
            }
        }
        let bills = SimulatedBillValidator()
        if let validator = settings.billValidator { bills.setup = Self.billSetup(validator.bills, settings) }
        let readers = settings.cashless.map { reader in
            let device = SimulatedCashlessReader(
                address: reader.reader == .first ? .cashless1 : .cashless2, features: reader.selectionFirst ? [.alwaysIdle] : [])
            device.config = ReaderConfig(
                level: device.config.level, currency: Self.currencyCode(settings), scaleFactor: 1,
                decimalPlaces: UInt8(settings.currency.minorDigits), maximumResponseTime: device.config.maximumResponseTime,
                options: device.config.options)
            return device
        }
        interface = SimulatedQibixxInterface(
            changer: changer, bills: bills, readers: readers, present: (settings.changer != nil, settings.billValidator != nil))
    }

    /// How the bus reaches the simulated interface: each connection is a new socket pair whose
    /// far end a thread of its own serves until vendd closes the near end.
    var link: MDBInterfaceLink {
        MDBInterfaceLink(name: "the simulated MDB interface (in-process)") { [self] () throws(LinkError) -> ByteStream in
            let (near, far): (UnixSocket, UnixSocket)
            do {
                (near, far) = try UnixSocket.pair()
            } catch {
                throw .cannotOpen(port: "the simulated MDB interface", reason: "\(error)")
            }
            PosixThread.start(name: "vendd-sim-mdb") { [self] in
                interface.serve(far) { [self] devices in
                    if settings.changer != nil { keepTubes(devices.changer) }
                }
            }
            return SocketStream(name: "the simulated MDB interface", socket: near)
        }
    }

    // MARK: What `vendctl sim` does

    enum Refusal: Error, CustomStringConvertible {
        case noDevice(String)
        case noType(kind: String, value: String, known: [String])
        case notHeard(String)
        /// The device is there but would not take it now, as a customer would find it.
        case notTaking(String)

        /// A value no type of the device is worth is a wrong argument (exit 64); the rest are
        /// refusals (exit 1).
        var code: ControlError.Code {
            if case .noType = self { .badRequest } else { .rejected }
        }

        var description: String {
            switch self {
            case .noDevice(let what): "the configuration has no \(what) under mdb:"
            case .noType(let kind, let value, let known): "no \(kind) type is worth \(value) (\(kind) types: \(known.joined(separator: ", ")))"
            case .notHeard(let what): "vendd did not hear the \(what) within 5 s (is the MDB bus up? see vendctl status)"
            case .notTaking(let why): why
            }
        }
    }

    /// A customer's coin into the changer: where it went (tube, cash box, or back: refused).
    func insertCoin(_ value: Money, format: MoneyFormat) throws(Refusal) -> CoinRouting {
        guard let coins = settings.changer?.coins else { throw .noDevice("coin changer") }
        guard let type = coins.first(where: { $0.value == value })?.type else {
            throw .noType(kind: "coin", value: format.string(for: value), known: coins.map { format.string(for: $0.value) })
        }
        awaitEnabled { !$0.changer.acceptMask.isEmpty }
        let routing = interface.with { $0.changer.insert(type: type) }
        try waitUntilHeard("coin")
        return routing
    }

    /// A customer's note into the validator: stacked (credited) or returned, and why.
    func insertNote(_ value: Money, format: MoneyFormat) throws(Refusal) -> (stacked: Bool, reason: String?) {
        guard let bills = settings.billValidator?.bills else { throw .noDevice("bill validator") }
        guard let type = bills.first(where: { $0.value == value })?.type else {
            throw .noType(kind: "bill", value: format.string(for: value), known: bills.map { format.string(for: $0.value) })
        }
        awaitEnabled { !$0.bills.acceptMask.isEmpty }
        let before = interface.with { ($0.bills.stacked.count, $0.bills.returned.count, $0.bills.acceptMask.contains(type)) }
        interface.with { $0.bills.insert(type: type) }
        try waitUntilHeard("note")
        let stacked = interface.with { $0.bills.stacked.count > before.0 }
        guard !stacked else { return (true, nil) }
        return (false, before.2 ? "returned from escrow: the machine cannot take it now" : "the validator does not take it now")
    }

    /// A customer or the bank at a card reader.
    func card(_ reader: CardReader, _ action: SimulatedCardAction, funds: Money?, format: MoneyFormat) throws(Refusal) -> String {
        let address: MDBPeripheral = reader == .first ? .cashless1 : .cashless2
        // A customer taps once the reader shows it is ready (it is busy just after a vend), and
        // after the machine's latest wish (service mode: disabled) has reached it.
        if case .tap = action {
            awaitEveryDevicesTurn()
            awaitEnabled { $0.reader(address)?.state == .enabled }
        }
        let done: Result<String, Refusal>? = interface.with { devices in
            guard let device = devices.reader(address) else { return nil }
            return Self.act(action, on: device, reader: reader, funds: funds, format: format)
        }
        guard let done else { throw .noDevice("card reader \(reader.rawValue) (cashless)") }
        return try done.get()
    }

    /// What the customer (or the bank) does at the reader, as the reader takes it.
    private static func act(
        _ action: SimulatedCardAction, on device: SimulatedCashlessReader, reader: CardReader, funds: Money?, format: MoneyFormat
    ) -> Result<String, Refusal> {
        switch action {
        case .tap:
            guard device.state == .enabled else {
                return .failure(.notTaking("\(reader) is not taking cards now (reader \(device.state)); the card was not read"))
            }
            device.presentCard(funds: funds.map { UInt32(clamping: $0.minorUnits) })
            return .success("a card on \(reader)" + (funds.map { " with \(format.string(for: $0)) of funds" } ?? ""))
        case .remove:
            device.removeCard()
            return .success("the card taken away from \(reader)")
        case .deny:
            device.faults.deny = true
            return .success("\(reader) denies the next vend")
        case .slow(let polls):
            device.faults.approvalPolls = polls
            return .success("\(reader) approves the next vend after \(polls) polls")
        case .refundFail:
            device.faults.refundFails = true
            return .success("\(reader) fails to refund the next failed vend")
        case .showID(let age?):
            guard device.presentID(age: age) else { return .failure(.notTaking("\(reader) is not asking for an ID now")) }
            return .success("an ID showing age \(age) at \(reader)")
        case .showID(nil):
            guard device.presentIDWithoutAge() else { return .failure(.notTaking("\(reader) is not asking for an ID now")) }
            return .success("an ID with no readable age at \(reader)")
        case .back:
            guard device.pressBack() else { return .failure(.notTaking("\(reader) is not asking for an ID now")) }
            return .success("the customer gave up at \(reader)'s age prompt")
        }
    }

    /// A customer waits for the acceptors (or the reader) to light up: up to 3 s for the bus to
    /// initialise the device and the machine to enable it. A device still disabled then refuses
    /// the coin, note or card, as it would.
    private func awaitEnabled(_ enabled: (SimulatedQibixxInterface.Devices) -> Bool) {
        _ = interface.wait(until: enabled, deadline: .now + .seconds(3))
    }

    /// Waits until the bus has been round every device twice since now, so that an enable or
    /// disable the machine asked for before has been sent (the driver applies it in its turn).
    private func awaitEveryDevicesTurn() {
        let devices = (settings.changer == nil ? 0 : 1) + (settings.billValidator == nil ? 0 : 1) + settings.cashless.count
        let target = interface.with { $0.lines } + 2 * devices
        _ = interface.wait(until: { $0.lines >= target }, deadline: .now + .seconds(2))
    }

    /// Waits until the devices have nothing left to report and the driver has handled their last
    /// answer: the interface has answered one more line since, still quiet (the driver sends a
    /// line only after it has dealt with the previous answer).
    private func waitUntilHeard(_ what: String) throws(Refusal) {
        let deadline = ContinuousClock.now + .seconds(5)
        func isQuiet(_ devices: SimulatedQibixxInterface.Devices) -> Bool {
            !devices.changer.hasPendingReports && !devices.bills.hasPendingReports
        }
        var quietAt = 0
        while true {
            // Quiet: note how many lines the interface had answered then.
            let quiet = interface.wait(
                until: { devices in
                    guard isQuiet(devices) else { return false }
                    quietAt = devices.lines
                    return true
                }, deadline: deadline)
            guard quiet else { break }
            // One more line answered, still quiet: heard. Reports pending again: start over.
            var heard = false
            let moved = interface.wait(
                until: { devices in
                    heard = isQuiet(devices) && devices.lines > quietAt
                    return heard || !isQuiet(devices)
                }, deadline: deadline)
            guard moved else { break }
            if heard { return }
        }
        throw .notHeard(what)
    }

    // MARK: Devices that match the configuration

    /// The configured currency's ISO 4217 code in MDB's form; 0 when none is configured.
    private static func currencyCode(_ settings: MDBSettings) -> MDBCurrencyCode {
        settings.currencyNumeric.map(MDBCurrencyCode.init(iso4217Numeric:)) ?? MDBCurrencyCode(raw: 0)
    }

    /// Each type's value in the device's terms.
    private static func scaled(_ denominations: [MDBDenomination], limit: Int) -> ScaledValues {
        ScaledValues(Dictionary(denominations.map { ($0.type, $0.value.minorUnits) }, uniquingKeysWith: { _, last in last }), limit: limit)
    }

    private static func changerSetup(_ coins: [MDBDenomination], _ settings: MDBSettings) -> ChangerSetup {
        let scaled = scaled(coins, limit: Int(UInt8.max))
        return ChangerSetup(
            level: 3, currency: currencyCode(settings), scalingFactor: UInt8(scaled.factor), decimalPlaces: UInt8(settings.currency.minorDigits),
            routableToTubes: coins.map(\.type), coinCredits: scaled.credits)
    }

    private static func billSetup(_ bills: [MDBDenomination], _ settings: MDBSettings) -> BillSetup {
        let scaled = scaled(bills, limit: Int(UInt16.max))
        return BillSetup(
            level: 1, currency: currencyCode(settings), scalingFactor: UInt16(scaled.factor), decimalPlaces: UInt8(settings.currency.minorDigits),
            stackerCapacity: 400, highSecurityTypes: Array(0..<16), escrowCapable: true, billCredits: scaled.credits)
    }

    // MARK: The tubes across restarts

    /// Written when the counts change, so a restart (even after `kill -9`) finds the coins a
    /// real changer would still hold.
    private func keepTubes(_ changer: SimulatedChanger) {
        let tubes = changer.tubes
        guard
            keptTubes.withLock({ kept in
                defer { kept = tubes }
                return kept != tubes
            })
        else { return }
        tubesFile.keep(tubes.map(String.init))
    }

    /// A count per tube, none negative.
    private static func tubeCounts(_ fields: [Substring]) -> [Int]? {
        let counts = fields.compactMap { Int($0) }
        return !counts.isEmpty && counts.count == fields.count && counts.allSatisfy({ $0 >= 0 }) ? counts : nil
    }
}
