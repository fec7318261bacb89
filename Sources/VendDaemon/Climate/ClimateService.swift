import Logging
import Synchronization
import VendClimate
import VendConfig
import VendControl
import VendHardware
import VendPOSIX
import VendSensors
import VendTime
import VendingCore

/// The temperature zones' shell. Each zone's sensors are read on the `vendd-sensors` lane (a
/// DS18B20 conversion blocks for ~750 ms: never on the vend path, never on the machine's lane);
/// the reading goes to the zone's controller, whose trips enter the machine through its
/// inbox like any device's input, to be journaled as the zone's health lock.
///
/// The controllers' relay decisions drive the zones' lines (`ZoneOutputs`) under the zones' lock,
/// so the lines always follow the decisions in the order they were taken. Control time is the
/// monotonic clock (`ZoneClock`).
///
/// With `--simulate` the sensors read a `CabinetModel` per zone instead, driven by the zone's
/// own relay and the simulated door, on the daemon's clock, and the relays are lines of
/// simulated chips.
final class ClimateService: Sendable {
    private struct Zone {
        let config: ZoneConfig
        let sensors: [any TemperatureSensor]
        var controller: ZoneController
        /// The simulated cabinet; nil on real sensors.
        var model: CabinetModel?
        /// A fault the simulation reports instead of the model's temperature.
        var simulatedFault: SensorFault?
        /// Tells the machine when a tripped condition is over (its incident ends).
        var conditions = ZoneConditionWatch()
    }

    private let zones: Mutex<[Zone]>
    private let outputs: ZoneOutputs
    private let clock: ZoneClock
    private let lane = Lane<Int>(name: "vendd-sensors", capacity: 64)
    private let running = Atomic(true)
    /// The zones' recent readings, for `vendctl temps`.
    let history: ZoneHistories
    private let machine: MachineInputs
    private let logger: Logger
    let isSimulated: Bool

    private init(zones: [Zone], outputs: ZoneOutputs, clock: ZoneClock, simulated: Bool, machine: MachineInputs, logger: Logger) {
        self.zones = Mutex(zones)
        history = ZoneHistories(zones.map { ($0.config.settings.id, $0.config.settings.kind) })
        self.outputs = outputs
        self.clock = clock
        isSimulated = simulated
        self.machine = machine
        self.logger = logger
    }

    /// Requests the zones' relay lines on `chips` (all off) and starts reading every zone the
    /// file names; nil without a `zones:` section.
    static func start(
        _ config: VenddConfig, simulate: Bool, chips: GPIOChipSet, machine: MachineInputs, timekeeper: any Timekeeper, logger: Logger
    ) throws(GPIOError) -> ClimateService? {
        guard !config.zones.isEmpty else { return nil }
        let outputs = try ZoneOutputs(zones: config.zones, chips: chips)
        let clock = ZoneClock(timekeeper: timekeeper)
        let now = clock.now
        let zones = config.zones.map { zone in
            Zone(
                config: zone, sensors: simulate ? [] : zone.sensors.map(Self.sensor),
                controller: ZoneController(settings: zone.settings, poweredOnAt: now),
                model: simulate ? CabinetModel(kind: zone.settings.kind, temperature: Self.startTemperature(zone.settings), at: now) : nil)
        }
        let service = ClimateService(zones: zones, outputs: outputs, clock: clock, simulated: simulate, machine: machine, logger: logger)
        service.lane.start { [service] index in service.read(zone: index) }
        for (index, zone) in config.zones.enumerated() {
            service.lane.put(index)
            timekeeper.repeatEvery(zone.readInterval) { [weak service] in
                guard let service, service.running.load(ordering: .acquiring) else { return false }
                // A full lane (sensors slower than their interval) skips a read; the next one comes.
                service.lane.put(index)
                return true
            }
            logger.notice(
                "zone \(zone.settings.id) (\(zone.settings.kind.rawValue)): \(simulate ? "simulated cabinet" : zone.sensors.map(\.name).joined(separator: ", ")), read every \(zone.readInterval.components.seconds) s\(Self.relayText(zone))",
                metadata: ["ZONE": "\(zone.settings.id)"])
        }
        return service
    }

    /// No more reads; every zone's relay off and its lines given back (SIGTERM, a failed start).
    func stop() {
        running.store(false, ordering: .releasing)
        lane.close()
        zones.withLock { _ in outputs.release() }
        logger.notice("temperature zones stopped: every zone relay off")
    }

    /// ", relay on line 12 of mcp23017" for the start-up log; nothing for a zone without a thermostat.
    private static func relayText(_ zone: ZoneConfig) -> String {
        guard zone.settings.thermostat != nil else { return "" }
        guard let relay = zone.relay else { return ", relay not driven (no 'relay')" }
        let chip: String = relay.chip.map { " of \($0)" } ?? ""
        return ", relay on line \(relay.line)\(chip)"
    }

    private static func sensor(_ config: SensorConfig) -> any TemperatureSensor {
        switch config {
        case .w1(let id): W1ThermSensor(name: config.name, id: id)
        case .hwmon(let chip, let device, let input): HwmonSensor(name: config.name, chip: chip, device: device, input: input)
        }
    }

    /// A simulated cabinet starts at its set point (the room for an ambient zone).
    private static func startTemperature(_ settings: ZoneSettings) -> Temperature {
        settings.thermostat?.setPoint ?? .celsius(22)
    }

    // MARK: - On the sensors' lane

    /// Reads the zone's sensors and gives the reading to its controller (internal for tests,
    /// which read at the instants they choose).
    func read(zone index: Int) {
        let sensors = zones.withLock { $0[index].sensors }
        // Real sensors are read outside the lock: a conversion blocks.
        let readings = sensors.map { $0.read() }
        var reading: Result<Temperature, SensorFault> = .failure(.missing)
        let (id, actions) = step(zone: index) { zone, now in
            reading = zone.config.settings.kind.reading(of: sensors.isEmpty ? [Self.simulatedReading(&zone, at: now)] : readings)
            return zone.controller.record(reading, at: now)
        }
        perform(actions, zone: id, reading: reading)
        let cleared = zones.withLock { $0[index].conditions.cleared(after: actions, reading: reading, settings: $0[index].config.settings) }
        // The history is of dates, as `vendctl temps` shows them; control time stays inside.
        history.record(reading, zone: id, at: clock.date(of: clock.now))
        for condition in cleared { machine.send(.zoneConditionCleared(id, condition)) }
    }

    /// Tells the zone's controller something at control time now, and switches its lines as it
    /// decides, under the zones' lock: two threads (the sensors' lane, the door's input, a
    /// technician) can never drive a line out of the order the controller decided in.
    private func step(zone index: Int, _ tell: (inout Zone, Instant) -> [ZoneAction]) -> (ZoneID, [ZoneAction]) {
        let (id, actions, failure) = zones.withLock { zones in
            let actions = tell(&zones[index], clock.now)
            return (zones[index].config.settings.id, actions, outputs.apply(actions, zone: index))
        }
        if let failure {
            logger.critical(
                "zone \(id): its relay could not be switched: \(failure); check the relay board and its wiring",
                metadata: ["ZONE": "\(id)"])
        }
        return (id, actions)
    }

    private static func simulatedReading(_ zone: inout Zone, at now: Instant) -> Result<Temperature, SensorFault> {
        guard var model = zone.model else { return .failure(.missing) }
        model.advance(to: now, relayOn: zone.controller.relayOn, doorOpen: zone.controller.doorOpen)
        zone.model = model
        return zone.simulatedFault.map { .failure($0) } ?? .success(model.temperature)
    }

    /// Relays and defrost are logged (their lines were switched by `step`); a trip goes to the
    /// machine.
    private func perform(_ actions: [ZoneAction], zone: ZoneID, reading: Result<Temperature, SensorFault>?) {
        let temperature: String =
            switch reading {
            case .success(let value): value.decimalCelsius
            case .failure(let fault): "\(fault)"
            case nil: "unknown"
            }
        for action in actions {
            switch action {
            case .relay(let on):
                logger.info(
                    "zone \(zone): relay \(on ? "on" : "off") at \(temperature) °C",
                    metadata: ["ZONE": "\(zone)", "RELAY": on ? "on" : "off", "TEMPERATURE": "\(temperature)"])
            case .defrostHeater(let on):
                logger.info("zone \(zone): defrost heater \(on ? "on" : "off")", metadata: ["ZONE": "\(zone)", "DEFROST_HEATER": on ? "on" : "off"])
            case .defrost(let phase):
                logger.notice(
                    "zone \(zone): \(Self.text(phase)) at \(temperature) °C",
                    metadata: ["ZONE": "\(zone)", "DEFROST": "\(Self.text(phase))", "TEMPERATURE": "\(temperature)"])
            case .tripped(let trip):
                // The lock records when the excursion began as a date.
                machine.send(.healthTripped(HealthTrip(zone: trip.zone, cause: trip.cause, since: clock.date(of: trip.since), worst: trip.worst)))
            }
        }
    }

    static func text(_ phase: DefrostPhase) -> String {
        switch phase {
        case .idle: "idle"
        case .defrosting: "defrosting"
        case .dripping: "dripping"
        }
    }

    // MARK: - Technician and simulation

    var zoneIDs: [ZoneID] { zones.withLock { $0.map(\.config.settings.id) } }

    /// A zone still past its health limit when serviced: how far, and the recovery window it
    /// has to get back within the limit.
    struct StillPastLimit {
        let temperature: Temperature
        let limit: Temperature
        let recovery: Duration
        /// A cold zone is past its limit when too warm, a hot one when too cool.
        let kind: ZoneKind
    }

    /// The zone's lock was cleared: its controller gives it a fresh recovery window. Says when
    /// the zone is still past its limit (it locks again unless it recovers within the window).
    /// Told by the machine's lane as it clears the lock, before the lane publishes its view: the
    /// fleet link, woken by the lock's event, reads the zone serviced.
    @discardableResult
    func serviced(_ zone: ZoneID) -> StillPastLimit? {
        guard let index = zoneIDs.firstIndex(of: zone) else { return nil }
        var still: StillPastLimit?
        let (_, actions) = step(zone: index) { zone, now in
            still = Self.pastLimit(zone)
            return zone.controller.serviced(at: now)
        }
        perform(actions, zone: zone, reading: nil)
        return still
    }

    /// How far the zone is past its health limit now, if it is (what a technician who serviced
    /// it is told).
    func pastLimit(_ zone: ZoneID) -> StillPastLimit? {
        guard let index = zoneIDs.firstIndex(of: zone) else { return nil }
        return zones.withLock { Self.pastLimit($0[index]) }
    }

    private static func pastLimit(_ zone: Zone) -> StillPastLimit? {
        let controller = zone.controller, settings = zone.config.settings
        guard let rule = settings.health, let temperature = controller.temperature, settings.kind.isPast(rule.limit, temperature) else {
            return nil
        }
        return StillPastLimit(temperature: temperature, limit: rule.limit, recovery: rule.recoveryAfterDoor, kind: settings.kind)
    }

    /// The cabinet door, which every zone shares.
    func setDoor(open: Bool) {
        for index in zoneIDs.indices {
            let (zone, actions) = step(zone: index) { zone, now in
                // The simulated cabinet moves on with the door as it was until now.
                if var model = zone.model {
                    model.advance(to: now, relayOn: zone.controller.relayOn, doorOpen: zone.controller.doorOpen)
                    zone.model = model
                }
                return zone.controller.setDoor(open: open, at: now)
            }
            perform(actions, zone: zone, reading: nil)
        }
        logger.notice("cabinet door \(open ? "open" : "closed")", metadata: ["DOOR": open ? "open" : "closed"])
    }

    enum SimulationRefusal: Error {
        case unknownZone(known: [ZoneID])
        case notSimulated
    }

    /// `vendctl sim temp`: the simulated cabinet is at `value` now (the next read sees it).
    func setSimulatedTemperature(_ value: Temperature, zone: ZoneID) throws(SimulationRefusal) {
        let now = clock.now
        try withSimulatedZone(zone) { $0.model?.set(value, at: now) }
        lane.put(zoneIDs.firstIndex(of: zone) ?? 0)
    }

    /// `vendctl sim sensor-fault`: the zone's sensors fail this way (nil: they read again).
    func setSimulatedFault(_ fault: SensorFault?, zone: ZoneID) throws(SimulationRefusal) {
        try withSimulatedZone(zone) { $0.simulatedFault = fault }
        lane.put(zoneIDs.firstIndex(of: zone) ?? 0)
    }

    private func withSimulatedZone(_ zone: ZoneID, _ change: (inout Zone) -> Void) throws(SimulationRefusal) {
        guard isSimulated else { throw .notSimulated }
        let found = zones.withLock { zones -> Bool in
            guard let index = zones.firstIndex(where: { $0.config.settings.id == zone }) else { return false }
            change(&zones[index])
            return true
        }
        if !found { throw .unknownZone(known: zoneIDs) }
    }

    /// Every zone for `vendctl status`, with the machine's locks.
    func status(locks: [ZoneID: HealthLock]) -> [StatusReport.Zone] {
        let now = clock.now
        return zones.withLock { zones in
            zones.map { zone in
                let controller = zone.controller
                let settings = zone.config.settings
                let lock = locks[settings.id].map { lock in
                    StatusReport.Lock(
                        cause: "\(lock.trip.cause)", since: lock.trip.since.millisecondsSinceEpoch, lockedAt: lock.lockedAt.millisecondsSinceEpoch,
                        worst: lock.trip.worst?.decimalCelsius)
                }
                return StatusReport.Zone(
                    id: settings.id.rawValue, kind: settings.kind.rawValue, temperature: controller.temperature?.decimalCelsius,
                    sensorFault: controller.fault.map { "\($0)" }, setPoint: settings.thermostat?.setPoint.decimalCelsius,
                    relayOn: settings.thermostat == nil ? nil : controller.relayOn, defrost: Self.text(controller.defrost),
                    doorOpen: controller.doorOpen, recovering: settings.health != nil && controller.isRecovering(at: now),
                    excursionSince: controller.excursion.map { clock.date(of: $0.since).millisecondsSinceEpoch },
                    excursionWorst: controller.excursion?.worst.decimalCelsius,
                    lock: lock)
            }
        }
    }
}
