import Synchronization
import VendSettings
import VendTime
import VendingCore

/// The physical world around a simulated machine: fingers on buttons, items falling past the
/// drop sensor when a relay pulses. It drives `SimulatedGPIOChip` lines only, so everything above
/// the chip runs exactly as on real hardware.
public final class SimulatedWorld: Sendable {
    public let chip: SimulatedGPIOChip
    public let coinAcceptor: SimulatedCoinAcceptor
    private let slots: [SlotConfig]
    private let buttons: [ButtonConfig]
    private let timekeeper: any Timekeeper
    /// Slots whose next vend drops nothing (a jammed spiral).
    private let failingSlots = Mutex<Set<SlotID>>([])

    /// How long a simulated finger holds a button: well past any debounce period.
    static let pressDuration: Duration = .milliseconds(120)
    /// When the item passes the sensor after the relay energises, and for how long.
    static let dropDelay: Duration = .milliseconds(150)
    static let dropDuration: Duration = .milliseconds(60)

    public init(slots: [SlotConfig], buttons: [ButtonConfig], coinChannels: [CoinChannel], timekeeper: any Timekeeper) {
        chip = SimulatedGPIOChip(timekeeper: timekeeper)
        self.timekeeper = timekeeper
        coinAcceptor = SimulatedCoinAcceptor(channels: coinChannels)
        self.slots = slots
        self.buttons = buttons
        let relays = Dictionary(slots.map { ($0.relay.line.line, $0) }, uniquingKeysWith: { first, _ in first })
        chip.observeOutputs { [weak self] line, active in
            guard active, let self, let slot = relays[line] else { return }
            self.relayEnergised(slot)
        }
    }

    public enum CommandError: Error, Equatable, CustomStringConvertible {
        case unknownSlot(SlotID, valid: [SlotID])
        case noSuchButton(ButtonAction)

        public var description: String {
            switch self {
            case .unknownSlot(let slot, let valid): "no slot \(slot) (slots: \(valid.map(\.rawValue).joined(separator: ", ")))"
            case .noSuchButton(let action): "the configuration has no \(action.rawValue) button"
            }
        }
    }

    /// A press and release of a slot's button.
    public func press(_ slot: SlotID) throws(CommandError) {
        guard let config = slots.first(where: { $0.id == slot }) else {
            throw .unknownSlot(slot, valid: slots.map(\.id))
        }
        pulse(config.button, for: Self.pressDuration)
    }

    /// A press and release of an action button (coin return).
    public func press(_ action: ButtonAction) throws(CommandError) {
        guard let button = buttons.first(where: { $0.action == action }) else { throw .noSuchButton(action) }
        pulse(button.line, for: Self.pressDuration)
    }

    /// Puts a switch (the service key, the door) on or off; it stays there.
    public func set(_ action: ButtonAction, active: Bool) throws(CommandError) {
        guard let button = buttons.first(where: { $0.action == action }) else { throw .noSuchButton(action) }
        chip.drive(button.line.line, active: active)
    }

    /// Whether the next vend from `slot` drops its item.
    public func setDrop(_ slot: SlotID, succeeds: Bool) throws(CommandError) {
        guard slots.contains(where: { $0.id == slot }) else { throw .unknownSlot(slot, valid: slots.map(\.id)) }
        failingSlots.withLock { failing in
            if succeeds { failing.remove(slot) } else { failing.insert(slot) }
        }
    }

    private func relayEnergised(_ slot: SlotConfig) {
        let fails = failingSlots.withLock { $0.remove(slot.id) != nil }
        guard let sensor = slot.dropSensor, !fails else { return }
        // Called while the relay is being set: the item falls later, on the timekeeper.
        // Each edge is stamped with when it is meant to happen, however late a busy machine runs
        // the timer, as the kernel stamps real edges.
        let chip = chip, falls = timekeeper.now + Self.dropDelay, passed = falls + Self.dropDuration
        timekeeper.schedule(at: falls) { chip.drive(sensor.input.line, active: true, at: falls) }
        timekeeper.schedule(at: passed) { chip.drive(sensor.input.line, active: false, at: passed) }
    }

    private func pulse(_ line: InputLineConfig, for duration: Duration) {
        let chip = chip, released = timekeeper.now + duration
        chip.drive(line.line, active: true)
        timekeeper.schedule(at: released) { chip.drive(line.line, active: false, at: released) }
    }
}
