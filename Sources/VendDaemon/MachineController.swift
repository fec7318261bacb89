import Logging
import Synchronization
import VendConfig
import VendControl
import VendDrivers
import VendHardware
import VendPOSIX
import VendStore
import VendTelemetry
import VendTime
import VendingCore

/// One record of the write-ahead journal: an input and when it happened. Replaying the records
/// over the last snapshot rebuilds the machine exactly, because the core is deterministic.
public struct JournalEntry: Codable, Sendable {
    public let at: Instant
    /// Absent in a record that only carries fleet events no input caused (a fault, a DEX session).
    public let input: Input?
    /// The fleet telemetry this input caused, numbered and made durable in the same write (absent
    /// without MQTT).
    public var outbox: [TelemetryEvent]? = nil
}

public typealias MachineStore = StateStore<MachineSnapshot, JournalEntry>

/// The only place the machine changes. Inputs arrive through the `MachineInbox` from whichever
/// thread (a GPIO edge, a coin, the dispenser's outcome, a control request, the tick); on the
/// machine's thread each is written to the journal (fsync) and applied to the state, which only
/// that thread can reach (`LaneBound`), then its effects are handed to the devices, in the order
/// the core returned them, with the state let go. A caller of `sendAndWait` (or a service's
/// `MachineRequests.request`) gets its answer after that. Every other thread reads the `View`
/// published after each input, and changes what the lane owns (the hardware, the configuration)
/// only by handing it work (`onLane`).
final class MachineController: Sendable {
    struct State {
        var machine: Machine
        let store: MachineStore
        var config: VenddConfig
        var hardware: Hardware?
        /// Why the machine is out of order, if it is: it sells nothing and takes no coins.
        var fault: MachineFault?
        /// The switches that decide service mode, set on the machine's lane in input order.
        var switches: ServiceModeSwitches
        /// Woken once the machine is quiet as each wants (see `waitUntilQuiet`).
        var quietWaiters: [QuietWaiter] = []
    }

    /// What the other threads read (`status`, reports): the state as it stood
    /// after the last input, replaced whole after each.
    struct View: Sendable {
        let machine: Machine
        let config: VenddConfig
        let hardware: Hardware?
        let fault: MachineFault?
        let switches: ServiceModeSwitches

        init(_ state: State) {
            machine = state.machine
            config = state.config
            hardware = state.hardware
            fault = state.fault
            switches = state.switches
        }

        var acceptsCoins: Bool { fault == nil && machine.acceptsCoins }
    }

    let logger: Logger
    let timekeeper: any Timekeeper
    /// The dispenser's timers (pulse end, maximum on-time, drop window): a timekeeper with a thread
    /// of its own (`vendd-relays`, the relay lane) that never touches the machine's state and
    /// never waits on storage, logging or the machine.
    let relayTimers: any Timekeeper
    let events: EventFanOut
    let notices: HardwareNotices
    /// The fleet outbox; nil without an `mqtt:` section.
    let outbox: Outbox?
    private let inbox = MachineInbox<InputOutcome>()
    /// The machine's state: on the machine's thread only.
    private let owned: LaneBound<State>
    private let published: Watched<View>
    /// Where devices and background services hand the machine their inputs.
    let inputs: MachineInputs
    /// What services on threads of their own (the DEX port, the fleet link) read and ask.
    let requests: MachineRequests
    /// The DEX port's sessions, for `vendctl status`.
    let dexSessions = DEXSessionLog()
    /// The temperature zones; nil without a `zones:` section (set once at start).
    let climate = Mutex<ClimateService?>(nil)
    let snapshotEvery = 500
    /// When the machine's lane last carried out a tick: what the watchdog is fed on.
    private let lastTick = Mutex<ContinuousClock.Instant?>(nil)

    init(
        machine: Machine, store: sending MachineStore, config: VenddConfig, logger: Logger, timekeeper: any Timekeeper,
        relayTimers: (any Timekeeper)? = nil, outbox: Outbox? = nil
    ) {
        self.logger = logger
        self.outbox = outbox
        self.timekeeper = timekeeper
        self.relayTimers = relayTimers ?? timekeeper
        events = EventFanOut(logger: logger)
        notices = HardwareNotices(logger: logger, timekeeper: timekeeper)
        let state = State(machine: machine, store: store, config: config, switches: ServiceModeSwitches(technician: machine.isInServiceMode))
        published = Watched(View(state))
        owned = inbox.bind(state)
        inputs = MachineInputs(inbox: inbox)
        requests = MachineRequests(inbox: inbox, published: published, timekeeper: timekeeper)
        inbox.start { [unowned self] input in process(input) }
    }

    /// The state as it stood after the last input.
    var view: View { requests.view }

    /// Waits (woken as each input's view is published) until `satisfied` holds for the view;
    /// false if it still does not after `limit`. For the control socket's simulated devices,
    /// whose answer waits for the machine to have heard them.
    func waitForView(within limit: Duration, until satisfied: (View) -> Bool) -> Bool {
        published.wait(until: satisfied, deadline: .now + limit)
    }
    var config: VenddConfig { view.config }
    var hasVendInFlight: Bool { view.machine.pendingVend != nil }
    var pendingVend: PendingVend? { view.machine.pendingVend }
    /// A copy of the machine as it stands.
    var currentMachine: Machine { view.machine }
    var acceptsCoins: Bool { view.acceptsCoins }
    var simulatedWorld: SimulatedWorld? { view.hardware?.world }
    /// The MDB devices `--simulate` runs in-process; nil on real hardware or a `unix:` MDB port.
    var simulatedMDB: InProcessMDB? { view.hardware?.simulatedMDB }

    static func acceptsCoins(_ state: State) -> Bool { state.fault == nil && state.machine.acceptsCoins }
    /// The largest bill a validator stacks: none while out of order.
    static func billLimit(_ state: State) -> Money? { state.fault == nil ? state.machine.billLimit : nil }

    // MARK: - Inputs

    /// Queues `input` and returns at once: for devices and timers.
    func send(_ input: Input) { inputs.send(input) }

    /// Queues `input` and returns its effects once it is journaled, applied and carried out.
    @discardableResult
    func sendAndWait(_ input: Input) -> [Effect] { requests.request(input)?.effects ?? [] }

    /// The service-mode switches as the machine's lane last set them.
    var switches: ServiceModeSwitches { view.switches }

    /// Returns once every input queued so far has been carried out.
    func settle() { inbox.settle() }

    /// On the machine's thread, after every input queued so far: `body` with the state, then the
    /// devices told of a fault it began or ended and the view published; returns `body`'s
    /// result. How the threads that set the machine up and tear it down (start-up, reload,
    /// shutdown) change what the lane owns.
    func onLane<Result: Sendable>(_ body: @escaping @Sendable (inout State) -> Result) -> Result {
        let result = Mutex<Result?>(nil)
        let ran = inbox.runAndWait { [self] in
            let (value, context) = owned.withValue { state in
                let faultBefore = state.fault
                let value = body(&state)
                return (value, EffectContext(state, faultBefore: faultBefore))
            }
            carryOutFaultChange(on: context)
            publish()
            result.withLock { $0 = value }
        }
        precondition(ran, "the machine's lane has ended")
        return result.withLock { $0 }!
    }

    /// On the machine's thread: the view the other threads read, replaced; then the fleet link
    /// woken if events were added, so that the `status()` it reads has the input that woke it
    /// (readers never wait for the lane). Returns the view.
    @discardableResult
    private func publish() -> View {
        let view = owned.withValue { View($0) }
        published.withValue { $0 = view }
        outbox?.wakeIfAdded()
        return view
    }

    /// On the machine's thread: one input, then any input its effects lead to at once (a relay
    /// that cannot move ends its vend). Returns the outcome of `input` itself; the view as it
    /// found it is the one published last (every change on the lane publishes one).
    private func process(_ input: LaneInput) -> InputOutcome {
        let before = view
        switch input {
        case .core(.setDraining(true)): logger.notice("draining: no vend, coin or payout starts until vendd has reloaded or stopped")
        case .core(.setDraining(false)): logger.notice("draining ended")
        default: break
        }
        var outcome: InputOutcome?
        var queue = [input]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            let (effects, context) = owned.withValue { state in
                let faultBefore = state.fault
                let effects = carryOut(next, &state)
                compactIfDue(&state)
                return (effects, EffectContext(state, faultBefore: faultBefore))
            }
            if effects.events.contains(where: \.changesRetainedOnly) { outbox?.retainedChanged() }
            tellZones(next, effects)
            let after = publish()
            carryOutFaultChange(on: context)
            outcome = outcome ?? InputOutcome(effects: effects, before: before, after: after)
            queue += effects.compactMap { perform($0, on: context) }.map(LaneInput.core)
        }
        let woken = owned.withValue { state -> [QuietWaiter] in
            let machine = state.machine
            defer { state.quietWaiters.removeAll { $0.isQuiet(machine) } }
            return state.quietWaiters.filter { $0.isQuiet(machine) }
        }
        for waiter in woken { waiter.wake() }
        if case .core(.tick) = input { lastTick.withLock { $0 = timekeeper.now } }
        return outcome ?? InputOutcome(effects: [], before: before, after: before)
    }

    /// On the machine's thread, with its state: what the lane composes, then the core.
    private func carryOut(_ input: LaneInput, _ state: inout State) -> [Effect] {
        switch input {
        case .core(let input):
            if case .tick = input { retryStorage(&state) }
            return journalAndApply(input, &state)
        case .serviceSwitch(let which, let on):
            state.switches.set(which, on: on)
            return journalAndApply(.setServiceMode(state.switches.isOn), &state)
        case .hardwareFailed(let reason):
            enterFault(.hardware(reason), &state)
            return []
        case .fleetEvents(let events):
            journalTelemetry(events, &state)
            return []
        }
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
        let telemetry = outbox.map { $0.numbered($0.events(from: effects, at: now)) } ?? []
        do {
            _ = try state.store.append(JournalEntry(at: now, input: input, outbox: telemetry.isEmpty ? nil : telemetry))
        } catch {
            // What has physically happened (a coin in the cash box, an item dropped or not) is
            // applied anyway and said loudly; the save that ends the fault makes it durable (its
            // events are published from then on). Requests (a selection, a restock) are refused,
            // and so is a card's approval: unjournaled, it must not move a relay; the vend times
            // out and the reader is told VEND FAILURE.
            let applied: Bool
            switch input {
            case .coinInserted, .billStacked, .coinSourceSynchronised, .vendEnded, .payoutEnded, .payoutDeviceAsked,
                .payoutCountersSynchronised, .changeInventory, .coinsDispensedManually, .cardVendDenied, .cardVendNotSent, .cardVendUnresolved,
                .cardSettlementAnswered, .cardVendSettled, .cardSessionBegan,
                .cardSessionEnded, .cardReaderReady:
                applied = true
                state.machine = next
                // Numbered before the fault's own event, which takes the numbers after them.
                outbox?.add(telemetry, durable: false)
            default:
                applied = false
            }
            enterFault(.storage("the state journal cannot be written: \(error)"), &state)
            guard applied else { return [] }
            logger.critical(
                "\(input) applied without being journaled: it is saved once the state can be written again, and lost if vendd stops before")
            return effects
        }
        state.machine = next
        outbox?.add(telemetry, durable: true)
        return effects
    }

    /// Fleet events no input caused (a fault, a DEX session's end, `LaneInput.fleetEvents`):
    /// numbered and journaled in a record of their own, so that no later sequence number is on disk without them. While the
    /// state cannot be written they wait, unpublished, for the save that ends the fault.
    func journalTelemetry(_ events: [TelemetryEvent], _ state: inout State) {
        guard let outbox else { return }
        let numbered = outbox.numbered(events)
        guard !numbered.isEmpty else { return }
        var durable = false
        if !state.store.isWaitingToResume {
            let now = Instant(millisecondsSinceEpoch: timekeeper.wallClockMilliseconds)
            durable = (try? state.store.append(JournalEntry(at: now, input: nil, outbox: numbered))) != nil
        }
        outbox.add(numbered, durable: durable)
    }

    /// What carrying out an input's effects needs of the state (the attached hardware, whether
    /// the machine is out of order, the fault it began or ended): read on the lane before the
    /// state is let go, so no device is called with the state held.
    private struct EffectContext {
        let hardware: Hardware?
        let isFaulty: Bool
        let payoutPolicy: PayoutPolicy
        let format: MoneyFormat
        let setup: MachineSetup
        /// The reader that checks ages, when the verifier is a reader's own check.
        let ageCheckingReader: CardReader?
        /// The fault this input put the machine in (or a hardware fault that replaced one of storage).
        let faultBegan: MachineFault?
        /// When this input ended the machine's fault (a storage fault's first successful save):
        /// whether it takes coins and cards now, and its bill limit.
        let faultEnded: (acceptsCoins: Bool, acceptsCards: Bool, billLimit: Money?)?

        /// The slot's MDB item number; FFFFh ("undefined") for a slot no longer configured.
        func item(_ slot: SlotID) -> UInt16 { setup.itemNumber(of: slot) ?? 0xFFFF }

        init(_ state: State, faultBefore: MachineFault?) {
            setup = state.machine.setup
            ageCheckingReader = state.config.ageVerification?.reader
            hardware = state.hardware
            isFaulty = state.fault != nil
            payoutPolicy = state.machine.setup.payoutPolicy
            format = state.config.machine.moneyFormat
            switch (faultBefore, state.fault) {
            case (nil, let fault?),
                (.storage, let fault?) where fault.isHardware:
                faultBegan = fault
            default: faultBegan = nil
            }
            faultEnded =
                faultBefore != nil && state.fault == nil
                ? (MachineController.acceptsCoins(state), state.machine.acceptsCards, MachineController.billLimit(state)) : nil
        }
    }

    /// The zones share the cabinet door: open, the cabinet warms; closed, each zone gets its
    /// recovery window before its health rule may trip. Told here, in the door's input order
    /// with the service-mode switches. A zone's health lock cleared: its controller hears it (a
    /// fresh recovery window) before the view is published and the fleet link woken, so that the
    /// zone's health it reads is serviced.
    private func tellZones(_ input: LaneInput, _ effects: [Effect]) {
        guard let climate = climate.withLock({ $0 }) else { return }
        if case .serviceSwitch(.door, let open) = input { climate.setDoor(open: open) }
        for case .event(.healthLockCleared(let lock, _)) in effects { climate.serviced(lock.trip.zone) }
    }

    /// Out of order: coins, bills and cards refused, and for a hardware fault every relay given back;
    /// back in service: as the machine says. Before the input's own effects, the state let go.
    private func carryOutFaultChange(on context: EffectContext) {
        if let fault = context.faultBegan {
            context.hardware?.coinAcceptor.setAcceptance(false)
            context.hardware?.coinAcceptor.setBillLimit(nil)
            context.hardware?.cardReaders?.setCardAcceptance(false)
            if fault.isHardware { context.hardware?.dispenser.releaseAll() }
        } else if let accepting = context.faultEnded {
            context.hardware?.coinAcceptor.setAcceptance(accepting.acceptsCoins)
            context.hardware?.coinAcceptor.setBillLimit(accepting.billLimit)
            context.hardware?.cardReaders?.setCardAcceptance(accepting.acceptsCards)
        }
    }

    /// Hands one effect to its device. Devices answer through `send` (queued after this input);
    /// a payout device records what it holds through `sendAndWait` from its own lane.
    /// Returns an input to carry out next, if any.
    private func perform(_ effect: Effect, on context: EffectContext) -> Input? {
        switch effect {
        case .energiseRelay(let slot, let vend):
            guard let dispenser = context.hardware?.dispenser else { return .vendEnded(vend, .unknown) }
            let immediate = dispenser.start(slot) { [self] outcome in send(.vendEnded(vend, outcome)) }
            return immediate.map { .vendEnded(vend, $0) }
        case .payOut(let payout, let amount):
            guard context.payoutPolicy == .change else {
                logger.notice(
                    "pay \(context.format.string(for: amount)) to the customer by hand (payout: manual)",
                    metadata: ["AMOUNT": "\(amount.decimalString)"])
                return nil
            }
            guard let bank = context.hardware?.payouts else {
                logger.error("\(payout): no payout device is attached; nothing paid, the amount goes back to credit")
                let zero = Money.zero(amount.currency)
                return .payoutEnded(payout, paid: zero, unknown: zero, counters: [:])
            }
            bank.pay(
                amount,
                asking: { [self] device, holding in
                    sendAndWait(.payoutDeviceAsked(payout, device: device, holding: holding))
                }
            ) { [self] result in
                send(.payoutEnded(payout, paid: result.paid, unknown: result.unknown, counters: result.counters, inventory: bank.inventory()))
            }
        case .setCoinAcceptance(let enabled):
            context.hardware?.coinAcceptor.setAcceptance(enabled && !context.isFaulty)
        case .setBillLimit(let limit):
            context.hardware?.coinAcceptor.setBillLimit(context.isFaulty ? nil : limit)
        case .requestCardVend(let reader, let vend, let price, let slot):
            guard let item = context.setup.itemNumber(of: slot),
                context.hardware?.cardReaders?.post(.requestVend(vend, price: price, item: item), to: reader) == true
            else {
                logger.error("\(vend): \(reader) is not attached; the VEND REQUEST is not sent")
                return .cardVendNotSent(vend)
            }
        case .cancelCardVend(let reader, let vend):
            context.hardware?.cardReaders?.post(.cancelVend(vend), to: reader)
        case .settleCardVend(let settlement):
            // Kept by the machine until the reader acknowledges: told again when it is attached.
            context.hardware?.cardReaders?.post(.settle(settlement, item: context.item(settlement.slot)), to: settlement.reader)
        case .endCardSession(let reader):
            context.hardware?.cardReaders?.post(.endSession, to: reader)
        case .setCardAcceptance(let accepting):
            context.hardware?.cardReaders?.setCardAcceptance(accepting && !context.isFaulty)
        case .reportCashSale(let price, let slot):
            context.hardware?.cardReaders?.postToEveryReader(.cashSale(price: price, item: context.item(slot)))
        case .requestAgeCheck(let age):
            // A GPIO verifier is an attendant or a scanner that acts on its own.
            guard let reader = context.ageCheckingReader else { break }
            guard context.hardware?.cardReaders?.post(.checkAge(age), to: reader) == true else {
                logger.error("the age verifier \(reader) is not attached: the age check ends unanswered")
                return .ageRefused(.verifierLost)
            }
        case .cancelAgeCheck:
            if let reader = context.ageCheckingReader { context.hardware?.cardReaders?.post(.cancelAgeCheck, to: reader) }
        case .event(let event):
            events.publish(event, format: context.format, at: timekeeper.wallClockMilliseconds)
        }
        return nil
    }

    // MARK: - Hardware

    /// Takes over freshly brought-up hardware: routes its events here and sets coin acceptance.
    /// `interruptedVendSlot`: the slot of a vend a power cut interrupted, from the journal.
    func attach(_ hardware: Hardware, interruptedVendSlot: SlotID? = nil) {
        let cursors = onLane { state in
            state.hardware = hardware
            return state.machine.coinCursors
        }
        notices.reset()
        if let bank = hardware.payouts { InterruptedPayoutTakeover(controller: self, bank: bank).run() }
        handOverCardReaders(to: hardware)
        // Starting announces switch positions, which are inputs themselves.
        hardware.start(
            reportingTo: DeviceReportRoute(logger: logger, notices: notices, machine: inputs, dispenser: hardware.dispenser),
            lastSequence: { cursors[$0] })
        // On the lane, in its order with the inputs that change acceptance and the bill limit.
        inbox.runAndWait { [self] in
            let (accepts, billLimit) = owned.withValue { (Self.acceptsCoins($0), Self.billLimit($0)) }
            hardware.coinAcceptor.setAcceptance(accepts)
            hardware.coinAcceptor.setBillLimit(billLimit)
        }
        // A motor away from home (a power cut mid-turn; the vend it served was resolved from the
        // journal) is locked for the technician, never turned to find out where it is.
        for slot in hardware.dispenser.motorsAwayFromHome(turning: interruptedVendSlot) {
            let byJournal = slot == interruptedVendSlot && hardware.dispenser.sharesHomeLine(slot)
            let why = byJournal ? "was turning when vendd stopped (its home line is shared)" : "found away from home at start"
            logger.error("motor of slot \(slot) \(why): slot locked", metadata: ["SLOT": "\(slot)"])
            send(.slotFaultFound(slot, .awayFromHome))
        }
        // What the devices said at once (a hopper's judgement of an interrupted payout) is
        // carried out before the machine is called ready.
        settle()
    }

    /// The card readers of freshly attached hardware hear first how every vend they may still
    /// hold ended (the machine keeps those settlements until acknowledged). Until each has been
    /// initialised and says it is ready, none is: the readiness replayed from the journal is
    /// the old hardware's.
    private func handOverCardReaders(to hardware: Hardware) {
        let machine = currentMachine
        for reader in machine.cardReaders.keys { sendAndWait(.cardReaderReady(reader, nil)) }
        guard let readers = hardware.cardReaders else { return }
        for settlement in machine.cardSettlements {
            readers.post(.settle(settlement, item: machine.setup.itemNumber(of: settlement.slot) ?? 0xFFFF), to: settlement.reader)
        }
    }

    /// The payout bank of the hardware attached now.
    var attachedPayouts: PayoutBank? { view.hardware?.payouts }

    /// Stops the hardware: coins inhibited, every relay off, lines released.
    func detachHardware() async {
        let detached = onLane { state in
            defer { state.hardware = nil }
            return state.hardware
        }
        // Off the lane: releasing the lines waits for their reader, which may be delivering.
        await detached?.shutDown()
    }

    /// Ends the machine's thread and releases the state directory's lock; the last thing before exit.
    func closeStore() {
        inbox.close { [self] in owned.withValue { $0.store.close() } }
    }

    // MARK: - Time, reload, shutdown

    /// Called every second: lets vend timeouts fire and retries a state that could not be
    /// written, on the machine's thread.
    func tick() {
        send(.tick)
    }

    /// When the machine's lane last carried out a tick; nil before the first. Only the lane
    /// itself moves it: a lane stuck in an fsync or a device call leaves it behind.
    var lastTickCarriedOut: ContinuousClock.Instant? { lastTick.withLock { $0 } }

    /// Takes a validated new configuration, between vends.
    func reconfigure(to newConfig: VenddConfig) -> Rejection? {
        let effects = sendAndWait(.reconfigure(newConfig.machineSetup))
        if let rejection = effects.events.compactMap({ if case .rejected(let reason) = $0 { reason } else { nil } }).first {
            return rejection
        }
        onLane { $0.config = newConfig }
        return nil
    }
}
