import Logging
import Synchronization
import VendConfig
import VendControl
import VendDrivers
import VendHardware
import VendStore
import VendTelemetry
import VendTime
import VendingCore

/// One record of the write-ahead journal: an input and when it happened. Replaying the records
/// over the last snapshot rebuilds the machine exactly, because the core is deterministic.
public struct JournalEntry: Codable, Sendable {
    public let at: Instant
    public let input: Input
    /// The fleet telemetry this input caused, made durable in the same write (absent without MQTT).
    public var outbox: [TelemetryEvent]? = nil
}

public typealias MachineStore = StateStore<MachineSnapshot, JournalEntry>

/// Someone waiting for the machine to be quiet (no vend, no payout in flight…).
struct QuietWaiter: Sendable {
    let isQuiet: @Sendable (Machine) -> Bool
    let wake: @Sendable () -> Void
}

/// The only place the machine changes. Inputs arrive through the `MachineInbox` from whichever
/// thread (a GPIO edge, a coin, the dispenser's outcome, a control request, the tick); on the
/// machine's thread each is written to the journal (fsync) and applied under the state's lock,
/// then its effects are handed to the devices, in the order the core returned them, outside it.
/// A caller of `sendAndWait` gets its answer after that.
final class MachineController: Sendable {
    private struct State {
        var machine: Machine
        let store: MachineStore
        var config: VenddConfig
        var hardware: Hardware?
        /// Why the machine is out of order, if it is: it sells nothing and takes no coins.
        var fault: Fault?
        var switches: ServiceModeSwitches
        /// Woken once the machine is quiet as each wants (see `waitUntilQuiet`).
        var quietWaiters: [QuietWaiter] = []
    }

    let logger: Logger
    let timekeeper: any Timekeeper
    /// The dispenser's timers (pulse end, maximum on-time, drop window): a lane that takes no
    /// machine lock and never waits on storage or logging.
    let relayLane: any Timekeeper
    let events: EventFanOut
    let notices: HardwareNotices
    /// The fleet outbox; nil without an `mqtt:` section.
    let outbox: Outbox?
    private let state: Mutex<State>
    private let inbox = MachineInbox()
    private let snapshotEvery = 500

    init(machine: Machine, store: sending MachineStore, config: VenddConfig, logger: Logger, timekeeper: any Timekeeper,
         relayLane: (any Timekeeper)? = nil, outbox: Outbox? = nil) {
        self.logger = logger
        self.outbox = outbox
        self.timekeeper = timekeeper
        self.relayLane = relayLane ?? timekeeper
        events = EventFanOut(logger: logger)
        notices = HardwareNotices(logger: logger, timekeeper: timekeeper)
        state = Mutex(State(machine: machine, store: store, config: config,
                            switches: ServiceModeSwitches(technician: machine.isInServiceMode)))
        inbox.start { [unowned self] input in process(input) }
    }

    var config: VenddConfig { state.withLock { $0.config } }
    var hasVendInFlight: Bool { state.withLock { $0.machine.pendingVend != nil } }
    var pendingVend: PendingVend? { state.withLock { $0.machine.pendingVend } }
    /// A copy of the machine as it stands.
    var currentMachine: Machine { state.withLock { $0.machine } }
    var acceptsCoins: Bool { state.withLock { Self.acceptsCoins($0) } }
    /// A bill validator's escrow decision: stack it, or return it to the customer.
    func acceptsBill(_ value: Money) -> Bool { state.withLock { $0.fault == nil && $0.machine.acceptsBill(value) } }
    var simulatedWorld: SimulatedWorld? { state.withLock { $0.hardware?.world } }

    private static func acceptsCoins(_ state: State) -> Bool { state.fault == nil && state.machine.acceptsCoins }

    /// Out of order, and whether it can end by itself.
    enum Fault: Sendable {
        /// The state cannot be written (disk full, read-only, I/O error). Every tick tries to save
        /// the machine again; the first save that succeeds puts it back in service.
        case storage(String)
        /// The hardware is gone; a restart (or reload) is needed.
        case hardware(String)

        var reason: String {
            switch self {
            case .storage(let reason): "\(reason); vendd retries every second and resumes by itself"
            case .hardware(let reason): reason
            }
        }
    }

    // MARK: - Inputs

    /// Queues `input` and returns at once: for devices and timers.
    func send(_ input: Input) { inbox.send(input) }

    /// Queues `input` and returns its effects once it is journaled, applied and carried out.
    @discardableResult
    func sendAndWait(_ input: Input) -> [Effect] { inbox.sendAndWait(input) }

    /// Returns once every input queued so far has been carried out.
    func settle() { inbox.settle() }

    /// On the machine's thread: one input, then any input its effects lead to at once (a relay
    /// that cannot move ends its vend). Returns the effects of `input` itself.
    private func process(_ input: Input) -> [Effect] {
        switch input {
        case .tick: state.withLock { retryStorage(&$0) }
        case .setDraining(true): logger.notice("draining: no vend, coin or payout starts until vendd has reloaded or stopped")
        case .setDraining(false): logger.notice("draining ended")
        default: break
        }
        var effectsOfInput: [Effect]?
        var queue = [input]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            let (effects, devices) = state.withLock { state in (journalAndApply(next, &state), Devices(state)) }
            effectsOfInput = effectsOfInput ?? effects
            queue += effects.compactMap { perform($0, on: devices) }
        }
        let woken = state.withLock { state -> [QuietWaiter] in
            compactIfDue(&state)
            let machine = state.machine
            defer { state.quietWaiters.removeAll { $0.isQuiet(machine) } }
            return state.quietWaiters.filter { $0.isQuiet(machine) }
        }
        for waiter in woken { waiter.wake() }
        return effectsOfInput ?? []
    }

    /// Journal first, then the machine. An input that changes nothing is not journaled, nor is
    /// draining (a restart is never draining).
    private func journalAndApply(_ input: Input, _ state: inout State) -> [Effect] {
        if let fault = state.fault, case .slotSelected = input {
            logger.error("selection refused: the machine is out of order (\(fault.reason))")
            return []
        }
        let now = Instant(millisecondsSinceEpoch: timekeeper.wallClockMilliseconds)
        var next = state.machine
        let effects = next.apply(input, at: now)
        guard next != state.machine else { return effects }
        if case .setDraining = input {
            state.machine = next
            return effects
        }
        let telemetry = outbox?.events(from: effects, at: now) ?? []
        do {
            _ = try state.store.append(JournalEntry(at: now, input: input, outbox: telemetry.isEmpty ? nil : telemetry))
        } catch {
            enterFault(.storage("the state journal cannot be written: \(error)"), &state)
            // What has physically happened (a coin in the cash box, an item dropped or not) is
            // applied anyway and said loudly; the save that ends the fault makes it durable.
            // Requests (a selection, a restock) are refused.
            switch input {
            case .coinInserted, .billStacked, .coinSourceSynchronised, .vendEnded, .payoutEnded, .payoutDeviceAsked,
                 .payoutCountersSynchronised, .changeInventory, .coinsDispensedManually:
                logger.critical("\(input) applied without being journaled: it is saved once the state can be written again, and lost if vendd stops before")
            default:
                return []
            }
        }
        state.machine = next
        outbox?.add(telemetry)
        return effects
    }

    /// What carrying out effects needs of the state, read under its lock.
    private struct Devices {
        let hardware: Hardware?
        let isFaulty: Bool
        let payoutPolicy: PayoutPolicy
        let format: MoneyFormat

        init(_ state: State) {
            hardware = state.hardware
            isFaulty = state.fault != nil
            payoutPolicy = state.machine.setup.payoutPolicy
            format = state.config.machine.moneyFormat
        }
    }

    /// Hands one effect to its device. Devices answer through `send` (never on this stack's
    /// lock); a payout device records what it holds through `sendAndWait` from its own lane.
    /// Returns an input to carry out next, if any.
    private func perform(_ effect: Effect, on devices: Devices) -> Input? {
        switch effect {
        case .energiseRelay(let slot, let vend):
            guard let dispenser = devices.hardware?.dispenser else { return .vendEnded(vend, .unknown) }
            let immediate = dispenser.start(slot) { [self] outcome in send(.vendEnded(vend, outcome)) }
            return immediate.map { .vendEnded(vend, $0) }
        case .payOut(let payout, let amount):
            guard devices.payoutPolicy == .change else {
                logger.notice("pay \(devices.format.string(for: amount)) to the customer by hand (payout: manual)",
                              metadata: ["AMOUNT": "\(amount.decimalString)"])
                return nil
            }
            guard let bank = devices.hardware?.payouts else {
                logger.error("\(payout): no payout device is attached; nothing paid, the amount goes back to credit")
                let zero = Money.zero(amount.currency)
                return .payoutEnded(payout, paid: zero, unknown: zero, counters: [:])
            }
            bank.pay(amount, asking: { [self] device, holding in
                sendAndWait(.payoutDeviceAsked(payout, device: device, holding: holding))
            }) { [self] result in
                send(.payoutEnded(payout, paid: result.paid, unknown: result.unknown, counters: result.counters))
                send(.changeInventory(bank.inventory()))
            }
        case .setCoinAcceptance(let enabled):
            devices.hardware?.coinAcceptor.setAcceptance(enabled && !devices.isFaulty)
        case .event(let event):
            events.publish(event, format: devices.format, at: timekeeper.wallClockMilliseconds)
        }
        return nil
    }

    private func enterFault(_ fault: Fault, _ state: inout State) {
        if case .hardware = state.fault { return }
        if case .storage = state.fault, case .storage = fault { return }
        state.fault = fault
        state.hardware?.coinAcceptor.setAcceptance(false)
        // Not journaled (the journal may be what failed): durable from the next compaction on.
        if let outbox { outbox.add([outbox.fault(fault.reason, at: Instant(millisecondsSinceEpoch: timekeeper.wallClockMilliseconds))]) }
        switch fault {
        case .storage(let reason):
            logger.critical("OUT OF ORDER: \(reason). Sales and coins are stopped; every coin already credited is kept. Free space or fix the file system: vendd retries every second and resumes by itself.")
        case .hardware(let reason):
            logger.critical("OUT OF ORDER: \(reason). Sales are stopped; fix the cause and restart vendd.")
            state.hardware?.dispenser.releaseAll()
        }
    }

    /// The hardware can no longer work (its inputs are gone): out of order until a restart.
    func hardwareFailed(_ reason: String) {
        state.withLock { enterFault(.hardware(reason), &$0) }
    }

    /// A storage fault ends with the first save of the whole machine that succeeds.
    private func retryStorage(_ state: inout State) {
        guard case .storage = state.fault else { return }
        do {
            try saveOutbox(state)
            try state.store.resume(with: MachineSnapshot(state.machine))
        } catch {
            return
        }
        state.fault = nil
        logger.notice("the state can be written again: the machine is saved and back in service")
        state.hardware?.coinAcceptor.setAcceptance(Self.acceptsCoins(state))
    }

    private func compactIfDue(_ state: inout State) {
        guard state.store.entriesSinceSnapshot >= snapshotEvery else { return }
        saveSnapshot(&state)
    }

    /// Writes the whole machine and empties the journal.
    func saveSnapshot() {
        state.withLock { saveSnapshot(&$0) }
    }

    private func saveSnapshot(_ state: inout State) {
        if state.store.isWaitingToResume { return retryStorage(&state) }
        do {
            try saveOutbox(state)
            try state.store.writeSnapshot(MachineSnapshot(state.machine))
        } catch {
            enterFault(.storage("the state snapshot cannot be written: \(error)"), &state)
        }
    }

    /// The unacknowledged events, before a compaction empties the journal that holds them.
    private func saveOutbox(_ state: State) throws(StateStoreError) {
        guard let outbox else { return }
        let bytes: [UInt8]
        do {
            bytes = try outbox.encoded(now: timekeeper.wallClockMilliseconds)
        } catch {
            throw .encoding(what: "fleet outbox", reason: "\(error)")
        }
        try state.store.replaceCompanion(Outbox.fileName, with: bytes)
    }

    /// Releases the state directory's lock; the last thing before exit.
    func closeStore() {
        inbox.close()
        state.withLock { $0.store.close() }
    }

    // MARK: - Hardware

    /// Takes over freshly brought-up hardware: routes its events here and sets coin acceptance.
    func attach(_ hardware: Hardware) {
        let cursors = state.withLock { state in
            state.hardware = hardware
            return state.machine.coinCursors
        }
        notices.reset()
        if let bank = hardware.payouts { takeOver(bank) }
        // Outside the lock: starting announces switch positions, which are inputs themselves.
        hardware.start(routingTo: self, lastSequence: { cursors[$0] })
        state.withLock { state in hardware.coinAcceptor.setAcceptance(Self.acceptsCoins(state)) }
        // What the devices said at once (a hopper's judgement of an interrupted payout) is
        // carried out before the machine is called ready.
        settle()
    }

    /// A payout device's coins changed outside a payout (an MDB changer reporting its tubes after
    /// its initialisation or a manual payout, a hopper's level sensor after a refill): the
    /// machine's exact-change judgement follows.
    func changeInventoryChanged() {
        guard let bank = state.withLock({ $0.hardware?.payouts }) else { return }
        send(.changeInventory(bank.inventory()))
    }

    /// Resolves a payout that was in flight when vendd stopped from what the devices report
    /// (never by paying again), or records their counters; then what they can pay. Until the
    /// devices have judged (an MDB changer once it has read its tubes), the payout stays pending:
    /// no coins, no sales, no other payout.
    private func takeOver(_ bank: PayoutBank) {
        let (pending, counters) = state.withLock { ($0.machine.pendingPayout, $0.machine.payoutCounters) }
        guard let pending else {
            sendAndWait(.payoutCountersSynchronised(bank.counters()))
            sendAndWait(.changeInventory(bank.inventory()))
            return
        }
        logger.notice("\(pending.id) was in flight when vendd stopped: asking the payout devices what they paid of it",
                      metadata: ["PAYOUT": "\(pending.id.rawValue)"])
        bank.resolveInterrupted(pending.amount, counters: counters, asked: pending.askedDevices, holdings: pending.holdings) { [self] resolution in
            // Hardware replaced meanwhile (a reload): the new bank resolves it.
            guard state.withLock({ $0.hardware?.payouts === bank }) else { return }
            logResolution(of: pending, resolution)
            let result = resolution.result
            send(.payoutEnded(pending.id, paid: result.paid, unknown: result.unknown, counters: result.counters))
            send(.changeInventory(bank.inventory()))
        }
    }

    private func logResolution(of pending: PendingPayout, _ resolution: PayoutBank.Resolution) {
        let format = config.machine.moneyFormat
        let result = resolution.result
        let rest = pending.amount - result.paid - result.unknown
        let devices = resolution.findings.map { finding in
            "\(finding.device): \(format.string(for: finding.part.paid)) paid\(finding.part.cannotTell.map { ", cannot tell the rest: \($0)" } ?? "")"
        }
        let text = "\(pending.id) of \(format.string(for: pending.amount)) was in flight when vendd stopped; the payout devices report \(format.string(for: result.paid)) paid\(result.unknown.isZero ? "" : ", \(format.string(for: result.unknown)) unknown"), \(format.string(for: rest)) back to credit; it is not paid again"
            + (devices.isEmpty ? " (no device was asked)" : " (\(devices.joined(separator: "; ")))")
        // The payout-ended event that follows says it again, at `crit` when some is unknown.
        logger.warning("\(text)", metadata: ["PAYOUT": "\(pending.id.rawValue)", "AMOUNT": "\(pending.amount.decimalString)",
                                             "PAID": "\(result.paid.decimalString)", "UNKNOWN": "\(result.unknown.decimalString)",
                                             "UNPAID": "\(rest.decimalString)"])
    }

    /// Stops the hardware: coins inhibited, every relay off, lines released.
    func detachHardware() async {
        let detached = state.withLock { state in
            defer { state.hardware = nil }
            return state.hardware
        }
        // Outside the lock: releasing the lines waits for their reader, which may be delivering.
        await detached?.shutDown()
    }

    func handle(_ event: PanelEvent) {
        switch event {
        case .slotButtonPressed(let slot): send(.slotSelected(slot))
        case .coinReturnPressed: send(.coinReturnPressed)
        case .serviceKey(let on): switchServiceMode { $0.serviceKeyOn = on }
        case .door(let open):
            logger.notice(open ? "door opened" : "door closed")
            switchServiceMode { $0.doorOpen = open }
        case .dropSensed:
            // Drop sensors belong to the dispenser; `Hardware` routes them there.
            break
        }
    }

    func handle(_ event: CoinAcceptorEvent) {
        switch event {
        case .accepted(let coin):
            logger.info("coin accepted on channel \(coin.channel)",
                        metadata: ["COIN_CHANNEL": "\(coin.channel)", "AMOUNT": "\(coin.value.decimalString)"])
            send(.coinInserted(value: coin.value, event: coin.event, route: coin.route))
        case .billStacked(let value, let event):
            logger.info("bill stacked", metadata: ["AMOUNT": "\(value.decimalString)"])
            send(.billStacked(value: value, event: event))
        case .synchronised(let event):
            send(.coinSourceSynchronised(event))
        case .dispensedManually(let amount):
            send(.coinsDispensedManually(amount))
        case .notice(let text, let isFault):
            notices.post(.coinAcceptor(text, isFault: isFault))
        }
    }

    // MARK: - Service mode

    private func switchServiceMode(_ change: (inout ServiceModeSwitches) -> Void) {
        send(.setServiceMode(changeSwitches(change)))
    }

    private func changeSwitches(_ change: (inout ServiceModeSwitches) -> Void) -> Bool {
        state.withLock { state in
            change(&state.switches)
            return state.switches.isOn
        }
    }

    /// `vendctl service on|off`. Nil when done; otherwise why service mode stays on.
    func setServiceModeByTechnician(_ on: Bool) -> String? {
        sendAndWait(.setServiceMode(changeSwitches { $0.technician = on }))
        return state.withLock { state in
            guard !on, state.machine.isInServiceMode else { return nil }
            return "service mode stays on while \(state.switches.reasons.joined(separator: " and ")); sales resume when that ends"
        }
    }

    // MARK: - Time, reload, shutdown

    /// Called every second: lets vend timeouts fire and retries a state that could not be
    /// written, on the machine's thread.
    func tick() {
        send(.tick)
    }

    /// Takes a validated new configuration, between vends.
    func reconfigure(to newConfig: VenddConfig) -> Rejection? {
        let effects = sendAndWait(.reconfigure(newConfig.machineSetup))
        if let rejection = effects.events.compactMap({ if case .rejected(let reason) = $0 { reason } else { nil } }).first {
            return rejection
        }
        state.withLock { $0.config = newConfig }
        return nil
    }

    /// Reload and shutdown: from here on in the inbox's order nothing new starts (no vend, coin
    /// or payout; `Input.setDraining`), then waits until no vend — and, with `payouts`, no payout
    /// — is in flight. False if `limit` passed first. `setDraining(false)` ends it.
    @discardableResult
    func drain(waitingFor limit: Duration, payouts: Bool = false) async -> Bool {
        sendAndWait(.setDraining(true))
        return await waitUntilQuiet(limit: limit) { $0.pendingVend == nil && (!payouts || $0.pendingPayout == nil) }
    }

    /// Waits until `isQuiet` holds of the machine; false if `limit` passed first. No polling:
    /// each input carried out checks the waiters.
    func waitUntilQuiet(limit: Duration, _ isQuiet: @escaping @Sendable (Machine) -> Bool) async -> Bool {
        let once = Mutex(false)
        let claim: @Sendable () -> Bool = { once.withLock { claimed in defer { claimed = true }; return !claimed } }
        return await withCheckedContinuation { continuation in
            let timer = timekeeper.schedule(after: limit) {
                if claim() { continuation.resume(returning: false) }
            }
            let quiet: @Sendable () -> Void = { [timekeeper] in
                timekeeper.cancel(timer)
                if claim() { continuation.resume(returning: true) }
            }
            let already = state.withLock { state in
                if isQuiet(state.machine) { return true }
                state.quietWaiters.append(QuietWaiter(isQuiet: isQuiet, wake: quiet))
                return false
            }
            if already { quiet() }
        }
    }

    // MARK: - Queries


    /// The machine's queries as they stand now.
    var reports: Reports {
        state.withLock {
            Reports(machine: $0.machine, format: $0.config.machine.moneyFormat, machineName: $0.config.machine.name,
                    levelSensedCoins: $0.hardware?.payouts?.hasLevelSensedCoins ?? false)
        }
    }

    func status() -> StatusReport {
        state.withLock { state in
            let hardware = state.hardware
            var report = StatusReport(
                machine: state.machine, config: state.config, fault: state.fault?.reason, switches: state.switches,
                hardware: hardware.map { ($0.gpioDescription, $0.coinAcceptorDescription, $0.world != nil) },
                payouts: hardware?.payouts,
                health: notices.report(gpio: hardware?.gpioDescription, coinAcceptor: hardware?.coinAcceptorDescription))
            if let stacker = hardware?.mdb?.bus.stacker {
                report.billStacker = StatusReport.Stacker(bills: stacker.bills, capacity: stacker.capacity, full: stacker.full)
            }
            if let outbox, let broker = state.config.mqtt?.broker {
                let (pending, oldest) = outbox.summary
                report.fleetOutbox = StatusReport.FleetOutbox(broker: broker.url, connected: outbox.isConnected, pending: pending, oldest: oldest)
            }
            return report
        }
    }
}
