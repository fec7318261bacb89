import VendConfig
import VendingCore

/// Drives the dispensing relays: one slot at a time (interlock), a pulse of the configured
/// length, a maximum on-time enforced by its own guard, and the drop-sensor window that turns a
/// pulse into an outcome.
public actor Dispenser {
    private struct Window {
        let slot: SlotID
        let sensor: LineReference
        let opened: ContinuousClock.Instant
        let closes: ContinuousClock.Instant
        var dropAfter: Duration?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let outputs: any GPIOOutputGroup
    private let slots: [SlotID: (index: Int, config: SlotConfig)]
    private let notify: HardwareNoticeHandler
    private var vending: SlotID?
    private var window: Window?

    /// Requests every slot's relay line, inactive.
    public init(chip: any GPIOChipBackend, slots: [SlotConfig], notify: @escaping HardwareNoticeHandler) throws(GPIOError) {
        outputs = try chip.requestOutputs(slots.map(\.relay.line), consumer: "vendd")
        self.slots = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1.id, ($0, $1)) })
        self.notify = notify
    }

    /// Pulses the slot's relay and reports what happened. Never energises two relays at once.
    public func dispense(_ slotID: SlotID) async -> VendOutcome {
        guard let (index, slot) = slots[slotID] else {
            notify(.fault("no relay is configured for slot \(slotID)"))
            return .notDropped
        }
        if let busy = vending {
            notify(.interlockRefused(slotID, busyWith: busy))
            return .notDropped
        }
        vending = slotID
        defer { vending = nil }

        let start = ContinuousClock.now
        if let sensor = slot.dropSensor {
            window = Window(slot: slotID, sensor: sensor.input.line, opened: start, closes: start + sensor.window)
        }
        do {
            try outputs.set(index, active: true)
        } catch {
            try? outputs.set(index, active: false)
            window = nil
            notify(.fault("relay of slot \(slotID) could not be energised: \(error)"))
            return .notDropped
        }
        notify(.relayEnergised(slotID, line: slot.relay.line.line))
        let guardTask = maximumOnGuard(index: index, slot: slot)
        try? await Task.sleep(for: slot.relay.pulse)
        release(index: index, slot: slot, since: start)
        guardTask.cancel()

        guard slot.dropSensor != nil else { return .pulsedWithoutSensor }
        await waitForDropOrWindowEnd()
        let dropAfter = window?.dropAfter
        window = nil
        if let dropAfter {
            notify(.dropSensed(slotID, after: dropAfter))
            return .dropped
        }
        notify(.noDropWithinWindow(slotID, window: slot.dropSensor?.window ?? .zero))
        return .notDropped
    }

    /// A drop sensor line became active.
    public func dropSensed(on line: LineReference) {
        let now = ContinuousClock.now
        guard var open = window, open.sensor == line, now <= open.closes else {
            notify(.dropOutsideWindow(line))
            return
        }
        if open.dropAfter == nil { open.dropAfter = now - open.opened }
        let waiter = open.waiter
        open.waiter = nil
        window = open
        waiter?.resume()
    }

    /// Every relay inactive and released; for shutdown and fatal errors. Needs no isolation, so
    /// it also works where awaiting the actor is not possible.
    public nonisolated func releaseAll() {
        outputs.release()
    }

    private func release(index: Int, slot: SlotConfig, since start: ContinuousClock.Instant) {
        do {
            try outputs.set(index, active: false)
        } catch {
            notify(.fault("relay of slot \(slot.id) could not be released: \(error); releasing every relay"))
            outputs.release()
        }
        notify(.relayReleased(slot.id, line: slot.relay.line.line, after: .now - start))
    }

    /// Cuts the relay after the maximum on-time whatever the pulse logic does: it runs apart from
    /// it and only needs the output group.
    private func maximumOnGuard(index: Int, slot: SlotConfig) -> Task<Void, Never> {
        let outputs = outputs, notify = notify
        return Task.detached {
            guard (try? await Task.sleep(for: slot.relay.maximumOn)) != nil else { return }
            try? outputs.set(index, active: false)
            notify(.relayCutByMaximumOnTime(slot.id, line: slot.relay.line.line, limit: slot.relay.maximumOn))
        }
    }

    private func waitForDropOrWindowEnd() async {
        guard let open = window, open.dropAfter == nil else { return }
        let timer = Task { [weak self] in
            try? await Task.sleep(until: open.closes, clock: .continuous)
            await self?.closeWindow()
        }
        await withCheckedContinuation { continuation in
            window?.waiter = continuation
        }
        timer.cancel()
    }

    private func closeWindow() {
        let waiter = window?.waiter
        window?.waiter = nil
        waiter?.resume()
    }
}
