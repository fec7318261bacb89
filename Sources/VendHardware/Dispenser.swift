import Synchronization
import VendSettings
import VendTime
import VendingCore

/// Drives the dispensing relays: one slot at a time (interlock), a pulse of the configured
/// length, a maximum on-time enforced by its own timer, and the drop-sensor window that turns a
/// pulse into an outcome. `start` sets the relay on the caller's thread (the hot path); the end
/// of the pulse, the window and the guard run on the timekeeper.
public final class Dispenser: Sendable {
    public typealias Completion = @Sendable (VendOutcome) -> Void

    private struct Vend {
        let slot: SlotID
        let index: Int
        let config: SlotConfig
        let started: ContinuousClock.Instant
        let completion: Completion
        var pulseEnded = false
        var dropAfter: Duration?
        var windowTimer: TimerID?
        var guardTimer: TimerID?
    }

    private let outputs: any GPIOOutputGroup
    private let slots: [SlotID: (index: Int, config: SlotConfig)]
    private let timekeeper: any Timekeeper
    private let notify: HardwareNoticeHandler
    private let vending = Mutex<Vend?>(nil)

    /// Requests every slot's relay line, inactive.
    public init(
        chip: any GPIOChipBackend, slots: [SlotConfig], timekeeper: any Timekeeper,
        notify: @escaping HardwareNoticeHandler
    ) throws(GPIOError) {
        outputs = try chip.requestOutputs(slots.map(\.relay.line), consumer: "vendd")
        self.slots = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1.id, ($0, $1)) })
        self.timekeeper = timekeeper
        self.notify = notify
    }

    /// Energises the slot's relay now. Returns nil when the relay is on: the outcome comes later
    /// through `completion`, from the timekeeper or the drop sensor's thread, never from within
    /// this call. Returns the outcome at once when the relay could not be energised.
    public func start(_ slotID: SlotID, completion: @escaping Completion) -> VendOutcome? {
        guard let (index, slot) = slots[slotID] else {
            notify(.fault("no relay is configured for slot \(slotID)"))
            return .notDropped
        }
        let refusal: HardwareNotice? = vending.withLock { vending in
            if let busy = vending { return .interlockRefused(slotID, busyWith: busy.slot) }
            do {
                try outputs.set(index, active: true)
            } catch {
                try? outputs.set(index, active: false)
                return .fault("relay of slot \(slotID) could not be energised: \(error)")
            }
            vending = Vend(slot: slotID, index: index, config: slot, started: timekeeper.now, completion: completion)
            return nil
        }
        if let refusal {
            notify(refusal)
            return .notDropped
        }
        notify(.relayEnergised(slotID, line: slot.relay.line.line))
        // The pulse's end first: at equal deadlines it runs first and cancels the guard.
        timekeeper.schedule(after: slot.relay.pulse) { [self] in endPulse() }
        let guardTimer = timekeeper.schedule(after: slot.relay.maximumOn) { [self] in cutByGuard(index: index, slot: slot) }
        vending.withLock { $0?.guardTimer = guardTimer }
        return nil
    }

    /// A drop sensor line became active at `instant` (now if not given): it confirms the vend
    /// whose window was open on it then, however late the event is handled.
    public func dropSensed(on line: LineReference, at instant: ContinuousClock.Instant? = nil) {
        let now = instant ?? timekeeper.now
        let finished: (Vend, VendOutcome)? = vending.withLock { vending in
            guard var vend = vending, let sensor = vend.config.dropSensor, sensor.input.line == line,
                now <= vend.started + sensor.window
            else { return nil }
            if vend.dropAfter == nil { vend.dropAfter = now - vend.started }
            vending = vend
            // Before the pulse ends the drop is kept; the pulse's end then completes the vend.
            guard vend.pulseEnded else { return nil }
            vending = nil
            return (vend, .dropped)
        }
        guard let (vend, outcome) = finished else {
            if !isWindowOpen(on: line) { notify(.dropOutsideWindow(line)) }
            return
        }
        complete(vend, outcome)
    }

    /// Every relay inactive and released; for shutdown and fatal errors.
    public func releaseAll() {
        outputs.release()
    }

    private func isWindowOpen(on line: LineReference) -> Bool {
        vending.withLock { $0?.config.dropSensor?.input.line == line }
    }

    private func endPulse() {
        let ended: (Vend, VendOutcome?)? = vending.withLock { vending in
            guard var vend = vending, !vend.pulseEnded else { return nil }
            vend.pulseEnded = true
            release(vend)
            guard let sensor = vend.config.dropSensor else {
                vending = nil
                return (vend, .pulsedWithoutSensor)
            }
            if vend.dropAfter != nil {
                vending = nil
                return (vend, .dropped)
            }
            vend.windowTimer = timekeeper.schedule(at: vend.started + sensor.window) { [self] in closeWindow() }
            vending = vend
            return (vend, nil)
        }
        guard let (vend, outcome) = ended else { return }
        if let guardTimer = vend.guardTimer { timekeeper.cancel(guardTimer) }
        notify(.relayReleased(vend.slot, line: vend.config.relay.line.line, after: timekeeper.now - vend.started))
        if let outcome { complete(vend, outcome) }
    }

    private func closeWindow() {
        let expired: Vend? = vending.withLock { vending in
            defer { vending = nil }
            return vending
        }
        guard let expired else { return }
        complete(expired, .notDropped)
    }

    private func complete(_ vend: Vend, _ outcome: VendOutcome) {
        if let windowTimer = vend.windowTimer { timekeeper.cancel(windowTimer) }
        switch outcome {
        case .dropped: notify(.dropSensed(vend.slot, after: vend.dropAfter ?? .zero))
        case .notDropped: notify(.noDropWithinWindow(vend.slot, window: vend.config.dropSensor?.window ?? .zero))
        default: break
        }
        vend.completion(outcome)
    }

    /// Called with the lock held.
    private func release(_ vend: Vend) {
        do {
            try outputs.set(vend.index, active: false)
        } catch {
            notify(.fault("relay of slot \(vend.slot) could not be released: \(error); releasing every relay"))
            outputs.release()
        }
    }

    /// Cuts the relay after the maximum on-time whatever the pulse logic does: it needs only the
    /// output group.
    private func cutByGuard(index: Int, slot: SlotConfig) {
        try? outputs.set(index, active: false)
        notify(.relayCutByMaximumOnTime(slot.id, line: slot.relay.line.line, limit: slot.relay.maximumOn))
    }
}
