import VendConfig
import VendingCore

/// What the machine's inputs mean, once debounced.
public enum PanelEvent: Sendable, Equatable {
    case slotButtonPressed(SlotID)
    case coinReturnPressed
    case serviceKey(on: Bool)
    case door(open: Bool)
    /// A drop sensor line became active; the dispenser decides which vend it confirms.
    case dropSensed(LineReference)
}

/// Every input line of the configuration — slot buttons, action buttons, drop sensors —
/// requested once, debounced ("stable for N ms"), and turned into `PanelEvent`s.
public final class InputPanel: Sendable {
    private enum Role: Sendable {
        case slotButton(SlotID), action(ButtonAction), dropSensor(LineReference)
    }

    private enum Step: Sendable {
        case edge(LineEvent)
        case settle
    }

    public let events: AsyncStream<PanelEvent>
    private let continuation: AsyncStream<PanelEvent>.Continuation
    private let group: any GPIOInputGroup
    private let roles: [Role]
    private let periods: [Duration]

    public init(chip: any GPIOChipBackend, slots: [SlotConfig], buttons: [ButtonConfig]) throws(GPIOError) {
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
        periods = group.isDebouncedByBackend ? lines.map { _ in .zero } : lines.map(\.debounce)
        (events, continuation) = AsyncStream.makeStream(of: PanelEvent.self, bufferingPolicy: .unbounded)
    }

    /// Reads edges until the panel is released. Run it in its own task.
    public func run() async {
        let initial = (try? group.currentValues()) ?? Array(repeating: false, count: roles.count)
        announceSwitchPositions(initial)
        var debouncer = Debouncer(initialLevels: initial, periods: periods)
        let (steps, stepInput) = AsyncStream.makeStream(of: Step.self, bufferingPolicy: .unbounded)
        let edges = group.events
        let forwarder = Task {
            for await edge in edges { stepInput.yield(.edge(edge)) }
            stepInput.finish()
        }
        defer { forwarder.cancel() }
        for await step in steps {
            switch step {
            case .edge(let edge):
                let deadline = debouncer.edge(line: edge.index, isActive: edge.isActive, at: edge.at)
                // Without a period (none configured, or the kernel debounces) the edge counts now.
                if periods[edge.index] == .zero { break }
                // The timer wakes the loop once the new level has been stable for the period. Its
                // step queues behind every edge already received, so a loop that fell behind still
                // sees a whole bounce before judging it (edges carry the time they happened).
                Task {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    stepInput.yield(.settle)
                }
                continue
            case .settle:
                break
            }
            for change in debouncer.settle(at: .now) {
                if let event = meaning(of: roles[change.line], isActive: change.isActive) {
                    continuation.yield(event)
                }
            }
        }
        continuation.finish()
    }

    /// Whether the GPIO backend (libgpiod v2, in the kernel) filters bounces, not this panel.
    public var isDebouncedByBackend: Bool { group.isDebouncedByBackend }

    public func release() {
        group.release()
    }

    private func announceSwitchPositions(_ levels: [Bool]) {
        for (role, level) in zip(roles, levels) {
            switch role {
            case .action(.serviceMode) where level: continuation.yield(.serviceKey(on: true))
            case .action(.door) where level: continuation.yield(.door(open: true))
            default: break
            }
        }
    }

    private func meaning(of role: Role, isActive: Bool) -> PanelEvent? {
        switch role {
        case .slotButton(let slot): isActive ? .slotButtonPressed(slot) : nil
        case .action(.coinReturn): isActive ? .coinReturnPressed : nil
        case .action(.serviceMode): .serviceKey(on: isActive)
        case .action(.door): .door(open: isActive)
        case .dropSensor(let line): isActive ? .dropSensed(line) : nil
        }
    }
}
