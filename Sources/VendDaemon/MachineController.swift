import Foundation
import Logging
import VendConfig
import VendControl
import VendHardware
import VendStore
import VendingCore

/// One record of the write-ahead journal: an input and when it happened. Replaying the records
/// over the last snapshot rebuilds the machine exactly, because the core is deterministic.
public struct JournalEntry: Codable, Sendable {
    public let at: Instant
    public let input: Input
}

public typealias MachineStore = StateStore<MachineSnapshot, JournalEntry>

extension Instant {
    static var now: Instant {
        Instant(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}

/// The machine and everything that must happen around each input, in order: write the input to
/// the journal (fsync) before its effects, apply it, carry out the effects, tell the observers.
/// The only place the machine changes.
actor MachineController {
    private var machine: Machine
    private let store: MachineStore
    let logger: Logger
    private(set) var config: VenddConfig
    private var hardware: Hardware?
    private var subscribers: [UUID: AsyncStream<EventLine>.Continuation] = [:]
    /// Set when the journal cannot be written: the machine stops selling until restarted.
    private var fault: String?
    private var serviceKeyOn = false
    private var doorOpen = false
    /// Set by `vendctl service on`; restored from the machine at start so a restart keeps it.
    private var serviceByTechnician: Bool
    private var health = HardwareHealth()
    private let snapshotEvery = 500

    init(machine: Machine, store: MachineStore, config: VenddConfig, logger: Logger) {
        self.machine = machine
        self.store = store
        self.config = config
        self.logger = logger
        serviceByTechnician = machine.isInServiceMode
    }

    var format: MoneyFormat { config.machine.moneyFormat }
    var hasVendInFlight: Bool { machine.pendingVend != nil }
    var pendingVendForRecovery: PendingVend? { machine.pendingVend }
    var acceptsCoins: Bool { fault == nil && machine.acceptsCoins }

    // MARK: - Inputs

    /// Persists, applies and carries out one input. Returns its effects.
    @discardableResult
    func submit(_ input: Input) -> [Effect] {
        if let fault, case .slotSelected = input {
            logger.error("selection refused: the machine is out of order (\(fault))")
            return []
        }
        let now = Instant.now
        var next = machine
        let effects = next.apply(input, at: now)
        if next != machine {
            do {
                _ = try store.append(JournalEntry(at: now, input: input))
            } catch {
                enterFault("the state journal cannot be written: \(error)")
                if case .coinInserted = input {
                    // The coin is in the cash box: credit it anyway and say so loudly.
                    logger.critical("coin credited without being journaled; it may be lost on restart")
                } else {
                    return []
                }
            }
            machine = next
        }
        perform(effects)
        compactIfDue()
        return effects
    }

    private func perform(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case .energiseRelay(let slot, let vend):
                guard let dispenser = hardware?.dispenser else {
                    submit(.vendEnded(vend, .unknown))
                    continue
                }
                Task {
                    let outcome = await dispenser.dispense(slot)
                    self.submit(.vendEnded(vend, outcome))
                }
            case .payOut(let amount):
                logger.notice("pay \(format.string(for: amount)) to the customer by hand (payout: manual)",
                              metadata: ["AMOUNT": "\(amount.decimalString)"])
            case .setCoinAcceptance(let enabled):
                setCoinAcceptance(enabled && fault == nil)
            case .event(let event):
                publish(event)
            }
        }
    }

    /// For shutdown: no more coins, whatever the machine would otherwise want.
    func inhibitCoins() async {
        await hardware?.coinAcceptor.setAcceptance(false)
    }

    private func setCoinAcceptance(_ enabled: Bool) {
        guard let acceptor = hardware?.coinAcceptor else { return }
        Task { await acceptor.setAcceptance(enabled) }
    }

    private func publish(_ event: MachineEvent) {
        let description = EventDescription(event, format: format)
        logger.log(level: description.level, "\(description.text)", metadata: description.fields)
        let line = EventLine(at: Instant.now.millisecondsSinceEpoch, kind: description.kind, text: description.text)
        for subscriber in subscribers.values { subscriber.yield(line) }
    }

    private func enterFault(_ reason: String) {
        guard fault == nil else { return }
        fault = reason
        logger.critical("OUT OF ORDER: \(reason). Sales are stopped; fix the cause and restart vendd.")
        setCoinAcceptance(false)
        hardware?.dispenser.releaseAll()
    }

    /// The hardware can no longer work (its inputs are gone): out of order, as for a state that
    /// cannot be written.
    func hardwareFailed(_ reason: String) {
        enterFault(reason)
    }

    private func compactIfDue() {
        guard store.entriesSinceSnapshot >= snapshotEvery else { return }
        saveSnapshot()
    }

    /// Releases the state directory's lock; the last thing before exit.
    func closeStore() {
        store.close()
    }

    /// Writes the whole machine and empties the journal.
    func saveSnapshot() {
        do {
            try store.writeSnapshot(MachineSnapshot(machine))
        } catch {
            enterFault("the state snapshot cannot be written: \(error)")
        }
    }

    // MARK: - Hardware

    /// Takes over freshly brought-up hardware: routes its events here and sets coin acceptance.
    func attach(_ hardware: Hardware) async {
        self.hardware = hardware
        health = HardwareHealth()
        hardware.startRouting(to: self)
        await hardware.coinAcceptor.start(lastSequence: hardware.cursorReader(for: machine))
        await hardware.coinAcceptor.setAcceptance(acceptsCoins)
    }

    /// Stops the hardware: coins inhibited, every relay off, lines released.
    func detachHardware() async {
        guard let hardware else { return }
        self.hardware = nil
        await hardware.shutDown()
    }

    func handle(_ event: PanelEvent) async {
        switch event {
        case .slotButtonPressed(let slot): submit(.slotSelected(slot))
        case .coinReturnPressed: submit(.coinReturnPressed)
        case .serviceKey(let on):
            serviceKeyOn = on
            updateServiceMode()
        case .door(let open):
            doorOpen = open
            logger.notice(open ? "door opened" : "door closed")
            updateServiceMode()
        case .dropSensed(let line):
            await hardware?.dispenser.dropSensed(on: line)
        }
    }

    func handle(_ event: CoinAcceptorEvent) {
        switch event {
        case .accepted(let coin):
            logger.info("coin accepted on channel \(coin.channel)",
                        metadata: ["COIN_CHANNEL": "\(coin.channel)", "AMOUNT": "\(coin.value.decimalString)"])
            submit(.coinInserted(value: coin.value, event: coin.event))
        case .synchronised(let event):
            submit(.coinSourceSynchronised(event))
        case .notice(let text, let isFault):
            health.coinAcceptorSaid(text, isFault: isFault, at: Instant.now.millisecondsSinceEpoch)
            logger.log(level: isFault ? .error : .notice, "coin acceptor: \(text)")
        }
    }

    func handle(_ notice: HardwareNotice) {
        health.record(notice, at: Instant.now.millisecondsSinceEpoch)
        switch notice {
        case .relayEnergised(let slot, let line):
            logger.info("relay of slot \(slot) energised (line \(line))", metadata: ["SLOT": "\(slot)"])
        case .relayReleased(let slot, let line, let after):
            logger.info("relay of slot \(slot) released after \(after.wholeMilliseconds) ms (line \(line))", metadata: ["SLOT": "\(slot)"])
        case .relayCutByMaximumOnTime(let slot, let line, let limit):
            logger.error("relay of slot \(slot) cut by its \(limit.wholeMilliseconds) ms limit (line \(line))", metadata: ["SLOT": "\(slot)"])
        case .dropSensed(let slot, let after):
            logger.info("drop sensed for slot \(slot) \(after.wholeMilliseconds) ms after the relay", metadata: ["SLOT": "\(slot)"])
        case .noDropWithinWindow(let slot, let window):
            logger.warning("no drop seen within \(window.wholeMilliseconds) ms for slot \(slot): check the slot for a jam or an empty spiral",
                           metadata: ["SLOT": "\(slot)"])
        case .dropOutsideWindow(let line):
            logger.warning("the drop sensor on line \(line) fired while no vend was in progress")
        case .interlockRefused(let slot, let busy):
            logger.error("relay of slot \(slot) refused: slot \(busy) is still dispensing", metadata: ["SLOT": "\(slot)"])
        case .fault(let text):
            logger.error("hardware: \(text)")
        }
    }

    /// The machine is in service mode while any of the key, the door or a technician says so.
    private func updateServiceMode() {
        submit(.setServiceMode(serviceKeyOn || doorOpen || serviceByTechnician))
    }

    /// `vendctl service on|off`. Nil when done; otherwise why service mode stays on.
    func setServiceModeByTechnician(_ on: Bool) -> String? {
        serviceByTechnician = on
        updateServiceMode()
        guard !on, machine.isInServiceMode else { return nil }
        return "service mode stays on while \(serviceModeReasons.joined(separator: " and ")); sales resume when that ends"
    }

    private var serviceModeReasons: [String] {
        [serviceKeyOn ? "the service key is on" : nil, doorOpen ? "the door is open" : nil,
         serviceByTechnician ? "switched on by a technician" : nil].compactMap { $0 }
    }

    // MARK: - Time, reload, shutdown

    /// Called every second: lets vend timeouts fire; proves the loop is alive.
    func tick() {
        submit(.tick)
    }

    /// Applies a validated new configuration between vends.
    func apply(_ newConfig: VenddConfig) -> Rejection? {
        let effects = submit(.reconfigure(newConfig.machineSetup))
        if let rejection = effects.events.compactMap({ if case .rejected(let reason) = $0 { reason } else { nil } }).first {
            return rejection
        }
        config = newConfig
        return nil
    }

    // MARK: - Observers and queries

    func subscribe() -> (UUID, AsyncStream<EventLine>) {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: EventLine.self, bufferingPolicy: .bufferingNewest(1_000))
        subscribers[id] = continuation
        return (id, stream)
    }

    func unsubscribe(_ id: UUID) {
        subscribers.removeValue(forKey: id)?.finish()
    }

    func endSubscriptions() {
        for subscriber in subscribers.values { subscriber.finish() }
        subscribers.removeAll()
    }

    var simulatedWorld: SimulatedWorld? { hardware?.world }

    func lastCoinSequence(from source: String) -> UInt64? { machine.lastCoinSequence(from: source) }

    /// The machine's queries as they stand now.
    var reports: Reports { Reports(machine: machine, format: format, machineName: config.machine.name) }

    func status() -> StatusReport {
        let state: (String, String?)
        if let fault {
            state = ("out-of-order", fault)
        } else if machine.isInServiceMode {
            state = ("service-mode", serviceModeReasons.joined(separator: " and "))
        } else {
            state = ("in-service", nil)
        }
        return StatusReport(
            machine: config.machine.name, state: state.0, stateReason: state.1,
            currency: config.machine.currency.code, credit: machine.credit.decimalString,
            creditText: format.string(for: machine.credit), acceptingCoins: acceptsCoins,
            vendInProgress: machine.pendingVend.map { "\($0.id) at slot \($0.slot)" },
            simulated: hardware?.world != nil, coinAcceptor: hardware?.coinAcceptorDescription ?? "stopped",
            gpio: hardware?.gpioDescription ?? "stopped", slots: reports.slots,
            books: StatusReport.Books(
                coinsIn: machine.ledger.coinsIn.decimalString, sales: machine.ledger.sales.decimalString,
                refunds: machine.ledger.refunds.decimalString,
                itemsSold: machine.ledger.salesByProduct.values.reduce(0) { $0 + $1.count },
                failedVends: machine.ledger.failedVends, unknownOutcomes: machine.ledger.unknownOutcomes),
            health: health.report(gpio: hardware?.gpioDescription, coinAcceptor: hardware?.coinAcceptorDescription))
    }
}
