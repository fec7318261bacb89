import Synchronization
import VendSettings
import VendTime
import VendingCore

/// What the machine's inputs mean, once debounced.
public enum PanelEvent: Sendable, Equatable {
    case slotButtonPressed(SlotID)
    case coinReturnPressed
    /// The age verifier (an attendant's button, an ID scanner's output) confirmed the customer's age.
    case ageVerified
    case serviceKey(on: Bool)
    case door(open: Bool)
    /// A drop sensor line became active (stably, at `at`); the dispenser decides which vend it
    /// confirms.
    case dropSensed(LineReference, at: ContinuousClock.Instant)
}

/// Every input line of the configuration — slot buttons, action buttons, drop sensors —
/// requested once, debounced ("stable for N ms"), and reported as `PanelEvent`s. An edge that
/// needs no debounce period (none configured, or the kernel debounces) becomes an event on the
/// backend's thread at once; the others when their timer finds them stable.
public final class InputPanel: Sendable {
    private enum Role: Sendable {
        case slotButton(SlotID), action(ButtonAction), dropSensor(LineReference)
    }

    private struct Running {
        var debouncer: Debouncer
        let report: DeviceReportHandler
    }

    private let group: any GPIOInputGroup
    private let roles: [Role]
    private let periods: [Duration]
    private let timekeeper: any Timekeeper
    /// Events leave while this is held, so they leave in the order the debouncer judged them.
    private let running = Mutex<Running?>(nil)

    public init(
        chip: any GPIOChipBackend, slots: [SlotConfig], buttons: [ButtonConfig],
        timekeeper: any Timekeeper
    ) throws(GPIOError) {
        var lines: [InputLineConfig] = []
        var roles: [Role] = []
        for slot in slots {
            lines.append(slot.button)
            roles.append(.slotButton(slot.id))
        }
        for button in buttons {
            lines.append(button.line)
            roles.append(.action(button.action))
        }
        // A drop sensor shared by several slots is one line, requested once.
        for sensor in slots.compactMap(\.dropSensor) where !lines.contains(where: { $0.line == sensor.input.line }) {
            lines.append(sensor.input)
            roles.append(.dropSensor(sensor.input.line))
        }
        group = try chip.requestInputs(lines, consumer: "vendd")
        self.roles = roles
        self.timekeeper = timekeeper
        periods = group.isDebouncedByBackend ? lines.map { _ in .zero } : lines.map(\.debounce)
    }

    /// Starts reading the lines: switches already on (service key, open door) are announced
    /// first, then every debounced change goes to `report` (`.panel`), and `.failed` if the lines
    /// stop delivering.
    public func start(_ report: @escaping DeviceReportHandler) {
        let initial = (try? group.currentValues()) ?? Array(repeating: false, count: roles.count)
        running.withLock { running in
            running = Running(debouncer: Debouncer(initialLevels: initial, periods: periods), report: report)
            announceSwitchPositions(initial, report)
        }
        group.start(
            deliver: { [self] edges in receive(edges) },
            lost: { report(.failed("the GPIO inputs stopped delivering events (chip removed or driver error)")) })
    }

    /// Whether the GPIO backend (libgpiod v2, in the kernel) filters bounces, not this panel.
    public var isDebouncedByBackend: Bool { group.isDebouncedByBackend }

    /// Stops the events (timers still pending find nothing to judge) and gives the lines back.
    public func release() {
        running.withLock { $0 = nil }
        group.release()
    }

    private func receive(_ edges: [LineEvent]) {
        guard let last = edges.last else { return }
        var settleAt: [Int: ContinuousClock.Instant] = [:]
        running.withLock { running in
            guard running != nil else { return }
            for edge in edges {
                let deadline = running!.debouncer.edge(line: edge.index, isActive: edge.isActive, at: edge.at)
                if periods[edge.index] != .zero { settleAt[edge.index] = deadline }
            }
            // Lines without a period count at once (the kernel debounced them); the others
            // settle when their timer fires, judged on every edge received by then.
            emitSettled(at: last.at, levels: nil, &running!)
        }
        for deadline in Set(settleAt.values) { settle(at: deadline) }
    }

    /// At `deadline`, the lines due are judged against their levels read then; one that reads
    /// otherwise than its last edge said is judged again a period later.
    private func settle(at deadline: ContinuousClock.Instant) {
        timekeeper.schedule(at: deadline) { [self] in
            let levels = try? group.currentValues()
            let recheckAt = running.withLock { running -> ContinuousClock.Instant? in
                guard running != nil else { return nil }
                return emitSettled(at: timekeeper.now, levels: levels, &running!)
            }
            if let recheckAt { settle(at: recheckAt) }
        }
    }

    /// Reports what settled by `instant`; returns when to judge again a line that read otherwise.
    @discardableResult
    private func emitSettled(
        at instant: ContinuousClock.Instant, levels: [Bool]?, _ running: inout Running
    ) -> ContinuousClock.Instant? {
        let settled = running.debouncer.settle(at: instant, levels: levels)
        for change in settled.changes {
            if let event = meaning(of: roles[change.line], isActive: change.isActive, at: change.at) {
                running.report(.panel(event))
            }
        }
        return settled.recheckAt
    }

    private func announceSwitchPositions(_ levels: [Bool], _ report: DeviceReportHandler) {
        for (role, level) in zip(roles, levels) {
            switch role {
            case .action(.serviceMode) where level: report(.panel(.serviceKey(on: true)))
            case .action(.door) where level: report(.panel(.door(open: true)))
            default: break
            }
        }
    }

    private func meaning(of role: Role, isActive: Bool, at instant: ContinuousClock.Instant) -> PanelEvent? {
        switch role {
        case .slotButton(let slot): isActive ? .slotButtonPressed(slot) : nil
        case .action(.coinReturn): isActive ? .coinReturnPressed : nil
        case .action(.serviceMode): .serviceKey(on: isActive)
        case .action(.door): .door(open: isActive)
        case .action(.ageVerified): isActive ? .ageVerified : nil
        case .dropSensor(let line): isActive ? .dropSensed(line, at: instant) : nil
        }
    }
}
