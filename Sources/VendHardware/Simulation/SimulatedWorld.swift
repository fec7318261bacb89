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
    /// Slots whose cam is away from home, kept in `camsFile` like a real spiral's position: a
    /// `kill -9` mid-turn (a power cut) leaves it where it was for the next start.
    private let camsAway: Mutex<Set<SlotID>>
    private let camsFile: SimulatedDeviceMemory?
    /// Home lines bussed to several motors: as in a matrix machine (US 7,221,115), such a line
    /// shows the cam of the motor under power only, and reads home while none is.
    private let sharedHomes: Set<String>

    /// How long a simulated finger holds a button: well past any debounce period.
    static let pressDuration: Duration = .milliseconds(120)
    /// When the item passes the sensor after the relay energises, and for how long.
    static let dropDelay: Duration = .milliseconds(150)
    static let dropDuration: Duration = .milliseconds(60)

    /// `lineLog`, when given, records every level change of every chip's lines.
    public init(
        slots: [SlotConfig], buttons: [ButtonConfig], coinChannels: [CoinChannel], timekeeper: any Timekeeper,
        matrix: MotorMatrixConfig? = nil, defaultChip: String = "simulated-gpio", camsFile: SimulatedDeviceMemory? = nil,
        lineLog: LineChangeLog? = nil
    ) throws(SimulatedDeviceMemory.Unreadable) {
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
        let key: @Sendable (String?, LineReference) -> String = { Self.lineKey($0, $1, defaultChip: defaultChip) }
        motors = SimulatedMotors(slots: slots, matrix: matrix, key: key)
        self.camsFile = camsFile
        // First, so that each change is stamped before the world reacts to it.
        if let lineLog {
            for (name, chip) in simulatedChips {
                chip.observeInputs { line, active in lineLog.record(chip: name, line: line, .input, active: active) }
                chip.observeOutputs { line, active in lineLog.record(chip: name, line: line, .output, active: active) }
            }
        }
        let away = try camsFile?.recall { Set($0.map { SlotID(String($0)) }) } ?? []
        camsAway = Mutex(away)
        let homeKeys = slots.compactMap(\.spiral).map { key($0.home.chip, $0.home.line) }
        sharedHomes = Set(homeKeys.filter { home in homeKeys.count { $0 == home } > 1 })
        // Every cam is where the last run left it (at home without a file), before vendd requests
        // the lines; a shared line idles at home.
        for slot in slots {
            guard let spiral = slot.spiral else { continue }
            drive(spiral.home, active: !away.contains(slot.id) || isShared(spiral.home))
        }
        var relays: [String: SlotConfig] = [:]
        for slot in slots {
            if let relay = slot.relay { relays[key(relay.line.chip, relay.line.line)] = slot }
        }
        for (name, chip) in simulatedChips {
            chip.observeOutputs { [weak self, motors, relays] line, active in
                let line = key(name, line)
                if active, let slot = relays[line] { self?.relayEnergised(slot) }
                let (started, stopped) = motors.outputChanged(line, active: active)
                for spiral in stopped { self?.idle(spiral.home) }
                for (slot, spiral) in started { self?.motorPowered(slot, spiral) }
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
            cam(of: slot, spiral, atHome: true)
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
            if motors.isTurning(slot.id, turn) { cam(of: slot.id, spiral, atHome: false, at: departs) }
        }
        guard !turn.jams else { return }
        let drops = !failingSlots.withLock { $0.remove(slot.id) != nil }
        if drops, let sensor = slot.dropSensor { dropItem(past: sensor, at: returns - Self.dropDuration - .milliseconds(40)) }
        timekeeper.schedule(at: returns) { [self] in
            if motors.isTurning(slot.id, turn) { cam(of: slot.id, spiral, atHome: true, at: returns) }
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

    /// The cam's position is written down before its switch moves, as the next start will read it.
    private func cam(of slot: SlotID, _ spiral: SpiralConfig, atHome: Bool, at instant: ContinuousClock.Instant? = nil) {
        camsAway.withLock { away in
            let changed = atHome ? away.remove(slot) != nil : away.insert(slot).inserted
            if changed { camsFile?.keep(away.map(\.rawValue).sorted()) }
        }
        guard !isShared(spiral.home) || motors.isPowered(slot) else { return }
        drive(spiral.home, active: atHome, at: instant)
    }

    /// A shared home line goes back to home when its motor loses power. Later, on the timekeeper,
    /// as the kernel delivers an edge: the motor is released with the dispenser's lock held.
    private func idle(_ home: InputLineConfig) {
        guard isShared(home) else { return }
        let now = timekeeper.now
        timekeeper.schedule(at: now) { [self] in drive(home, active: true, at: now) }
    }

    private func isShared(_ home: InputLineConfig) -> Bool {
        sharedHomes.contains(Self.lineKey(home.chip, home.line, defaultChip: defaultChip))
    }

    /// One name per line whichever way the file names its chip (none is the default chip).
    private static func lineKey(_ chip: String?, _ line: LineReference, defaultChip: String) -> String {
        "\(chip == defaultChip ? "" : chip ?? "")/\(line)"
    }

    private func drive(_ line: InputLineConfig, active: Bool, at instant: ContinuousClock.Instant? = nil) {
        simulatedChips[line.chip ?? defaultChip]?.drive(line.line, active: active, at: instant)
    }

    /// How long after power a simulated cam leaves home, and when it is back (one turn).
    static let camDeparture: Duration = .milliseconds(150)
    static let turnDuration: Duration = .milliseconds(1_200)
}
