import Synchronization
import VendSettings
import VendTime
import VendingCore

/// The physical world around a simulated machine: fingers on buttons, items falling past the
/// drop sensor when a relay pulses, spiral motors whose cam leaves home and comes back as they
/// turn. It drives `SimulatedGPIOChip` lines only (one per chip the file names), so everything
/// above the chips runs exactly as on real hardware.
public final class SimulatedWorld: Sendable {
    /// The default chip (`gpio.chip`).
    public let chip: SimulatedGPIOChip
    /// Every chip the configuration names, the default one included, as vendd opens them.
    public let chips: GPIOChipSet
    public let coinAcceptor: SimulatedCoinAcceptor
    private let slots: [SlotConfig]
    private let buttons: [ButtonConfig]
    private let timekeeper: any Timekeeper
    private let simulatedChips: [String: SimulatedGPIOChip]
    private let defaultChip: String
    /// Slots whose next vend drops nothing (an item caught on the spiral).
    private let failingSlots = Mutex<Set<SlotID>>([])
    private let motors: SimulatedMotors

    /// How long a simulated finger holds a button: well past any debounce period.
    static let pressDuration: Duration = .milliseconds(120)
    /// When the item passes the sensor after the relay energises, and for how long.
    static let dropDelay: Duration = .milliseconds(150)
    static let dropDuration: Duration = .milliseconds(60)

    public init(
        slots: [SlotConfig], buttons: [ButtonConfig], coinChannels: [CoinChannel], timekeeper: any Timekeeper,
        matrix: MotorMatrixConfig? = nil, defaultChip: String = "simulated-gpio"
    ) {
        let lines = LineUse.all(slots: slots, buttons: buttons, matrix: matrix)
        var simulatedChips = [defaultChip: SimulatedGPIOChip(timekeeper: timekeeper)]
        for name in lines.compactMap(\.chip) where simulatedChips[name] == nil {
            simulatedChips[name] = SimulatedGPIOChip(name: name, timekeeper: timekeeper)
        }
        chip = simulatedChips[defaultChip] ?? SimulatedGPIOChip(timekeeper: timekeeper)
        chips = GPIOChipSet(defaultChip: defaultChip) { [simulatedChips] name throws(GPIOError) in
            guard let chip = simulatedChips[name] else { throw .chipNotFound(name, available: simulatedChips.keys.sorted()) }
            return chip
        }
        self.simulatedChips = simulatedChips
        self.defaultChip = defaultChip
        self.timekeeper = timekeeper
        coinAcceptor = SimulatedCoinAcceptor(channels: coinChannels)
        self.slots = slots
        self.buttons = buttons
        let key: @Sendable (String?, LineReference) -> String = { chip, line in "\(chip == defaultChip ? "" : chip ?? "")/\(line)" }
        motors = SimulatedMotors(slots: slots, matrix: matrix, key: key)
        // Every cam starts at home, before vendd requests the lines.
        for spiral in slots.compactMap(\.spiral) { drive(spiral.home, active: true) }
        var relays: [String: SlotConfig] = [:]
        for slot in slots {
            if let relay = slot.relay { relays[key(relay.line.chip, relay.line.line)] = slot }
        }
        for (name, chip) in simulatedChips {
            chip.observeOutputs { [weak self, motors, relays] line, active in
                let line = key(name, line)
                if active, let slot = relays[line] { self?.relayEnergised(slot) }
                for (slot, spiral) in motors.outputChanged(line, active: active) { self?.motorPowered(slot, spiral) }
            }
        }
    }

    public enum CommandError: Error, Equatable, CustomStringConvertible {
        case unknownSlot(SlotID, valid: [SlotID])
        case noSuchButton(ButtonAction)
        case notAMotor(SlotID, motors: [SlotID])

        public var description: String {
            switch self {
            case .unknownSlot(let slot, let valid): "no slot \(slot) (slots: \(valid.map(\.rawValue).joined(separator: ", ")))"
            case .noSuchButton(let action): "the configuration has no \(action.rawValue) button"
            case .notAMotor(let slot, let motors):
                "slot \(slot) has no spiral motor (motor slots: \(motors.isEmpty ? "none" : motors.map(\.rawValue).joined(separator: ", ")))"
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
        drive(button.line, active: active)
    }

    /// Whether the next vend from `slot` drops its item.
    public func setDrop(_ slot: SlotID, succeeds: Bool) throws(CommandError) {
        guard slots.contains(where: { $0.id == slot }) else { throw .unknownSlot(slot, valid: slots.map(\.id)) }
        failingSlots.withLock { failing in
            if succeeds { failing.remove(slot) } else { failing.insert(slot) }
        }
    }

    /// The next turn of `slot`'s motor: it stops away from home (`jam`), or never leaves home
    /// (`missing`); `free` puts a stopped cam back home, as the technician's hand does.
    public func setMotor(_ slot: SlotID, _ fault: SimulatedMotorFault) throws(CommandError) {
        guard let spiral = slots.first(where: { $0.id == slot })?.spiral else {
            throw .notAMotor(slot, motors: slots.filter { $0.spiral != nil }.map(\.id))
        }
        if fault == .free {
            motors.setFault(nil, of: slot)
            drive(spiral.home, active: true)
        } else {
            motors.setFault(fault, of: slot)
        }
    }

    private func relayEnergised(_ slot: SlotConfig) {
        let fails = failingSlots.withLock { $0.remove(slot.id) != nil }
        guard let sensor = slot.dropSensor, !fails else { return }
        // Called while the relay is being set: the item falls later, on the timekeeper.
        dropItem(past: sensor, at: timekeeper.now + Self.dropDelay)
    }

    /// A motor got power: its cam leaves home shortly after, and comes back after a turn unless
    /// it is jammed; a missing motor does nothing. The item falls just before the cam is home.
    private func motorPowered(_ slot: SlotConfig, _ spiral: SpiralConfig) {
        guard let turn = motors.startTurn(slot.id) else { return }
        let started = timekeeper.now, departs = started + Self.camDeparture, returns = started + Self.turnDuration
        timekeeper.schedule(at: departs) { [self] in
            if motors.isTurning(slot.id, turn) { drive(spiral.home, active: false, at: departs) }
        }
        guard !turn.jams else { return }
        let drops = !failingSlots.withLock { $0.remove(slot.id) != nil }
        if drops, let sensor = slot.dropSensor { dropItem(past: sensor, at: returns - Self.dropDuration - .milliseconds(40)) }
        timekeeper.schedule(at: returns) { [self] in
            if motors.isTurning(slot.id, turn) { drive(spiral.home, active: true, at: returns) }
        }
    }

    /// Each edge is stamped with when it is meant to happen, however late a busy machine runs
    /// the timer, as the kernel stamps real edges.
    private func dropItem(past sensor: DropSensorConfig, at falls: ContinuousClock.Instant) {
        let passed = falls + Self.dropDuration
        timekeeper.schedule(at: falls) { [self] in drive(sensor.input, active: true, at: falls) }
        timekeeper.schedule(at: passed) { [self] in drive(sensor.input, active: false, at: passed) }
    }

    private func pulse(_ line: InputLineConfig, for duration: Duration) {
        let released = timekeeper.now + duration
        drive(line, active: true)
        timekeeper.schedule(at: released) { [self] in drive(line, active: false, at: released) }
    }

    private func drive(_ line: InputLineConfig, active: Bool, at instant: ContinuousClock.Instant? = nil) {
        simulatedChips[line.chip ?? defaultChip]?.drive(line.line, active: active, at: instant)
    }

    /// How long after power a simulated cam leaves home, and when it is back (one turn).
    static let camDeparture: Duration = .milliseconds(150)
    static let turnDuration: Duration = .milliseconds(1_200)
}
