import Logging
import Synchronization
import VendClimate
import VendConfig
import VendControl
import VendPOSIX
import VendSensors
import VendTime
import VendingCore

/// The temperature zones' shell. Each zone's sensors are read on the `vendd-sensors` lane (a
/// DS18B20 conversion blocks for ~750 ms: never on the vend path, never under the machine's
/// lock); the reading goes to the zone's controller, whose trips enter the machine through its
/// inbox like any device's input, to be journaled as the zone's health lock.
///
/// With `--simulate` the sensors read a `CabinetModel` per zone instead, driven by the zone's
/// own relay and the simulated door, on the daemon's clock.
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
    private let lane = Lane<Int>(name: "vendd-sensors", capacity: 64)
    private let running = Atomic(true)
    /// The zones' recent readings, for `vendctl temps`.
    let history: ZoneHistories
    private let machine: MachineController
    private let logger: Logger
    let isSimulated: Bool

    private init(zones: [Zone], simulated: Bool, machine: MachineController, logger: Logger) {
        self.zones = Mutex(zones)
        history = ZoneHistories(zones.map { ($0.config.settings.id, $0.config.settings.kind) })
        isSimulated = simulated
        self.machine = machine
        self.logger = logger
    }

    /// Starts reading every zone the file names; nil without a `zones:` section.
    static func start(_ config: VenddConfig, simulate: Bool, controller: MachineController, logger: Logger) -> ClimateService? {
        guard !config.zones.isEmpty else { return nil }
        let now = Instant(millisecondsSinceEpoch: controller.timekeeper.wallClockMilliseconds)
        let zones = config.zones.map { zone in
            Zone(
                config: zone, sensors: simulate ? [] : zone.sensors.map(Self.sensor),
                controller: ZoneController(settings: zone.settings, poweredOnAt: now),
                model: simulate ? CabinetModel(kind: zone.settings.kind, temperature: Self.startTemperature(zone.settings), at: now) : nil)
        }
        let service = ClimateService(zones: zones, simulated: simulate, machine: controller, logger: logger)
        service.lane.start { [service] index in service.read(zone: index) }
        for (index, zone) in config.zones.enumerated() {
            service.lane.put(index)
            controller.timekeeper.repeatEvery(zone.readInterval) { [weak service] in
                guard let service, service.running.load(ordering: .acquiring) else { return false }
                // A full lane (sensors slower than their interval) skips a read; the next one comes.
                service.lane.put(index)
                return true
            }
            logger.notice(
                "zone \(zone.settings.id) (\(zone.settings.kind.rawValue)): \(simulate ? "simulated cabinet" : zone.sensors.map(\.name).joined(separator: ", ")), read every \(zone.readInterval.components.seconds) s",
                metadata: ["ZONE": "\(zone.settings.id)"])
        }
        return service
    }

    func stop() {
        running.store(false, ordering: .releasing)
        lane.close()
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

    private var now: Instant { Instant(millisecondsSinceEpoch: machine.timekeeper.wallClockMilliseconds) }

    // MARK: - On the sensors' lane

    private func read(zone index: Int) {
        let now = self.now
        let sensors = zones.withLock { $0[index].sensors }
        // Real sensors are read outside the lock: a conversion blocks.
        let readings =
            sensors.isEmpty
            ? [zones.withLock { zones in Self.simulatedReading(&zones[index], at: now) }]
            : sensors.map { $0.read() }
        let (id, kind) = zones.withLock { ($0[index].config.settings.id, $0[index].config.settings.kind) }
        let reading = kind.reading(of: readings)
        let actions = zones.withLock { $0[index].controller.record(reading, at: now) }
        perform(actions, zone: id, reading: reading)
        let cleared = zones.withLock { $0[index].conditions.cleared(after: actions, reading: reading, settings: $0[index].config.settings) }
        history.record(reading, zone: id, at: now)
        for condition in cleared { machine.send(.zoneConditionCleared(id, condition)) }
    }

    private static func simulatedReading(_ zone: inout Zone, at now: Instant) -> Result<Temperature, SensorFault> {
        guard var model = zone.model else { return .failure(.missing) }
        model.advance(to: now, relayOn: zone.controller.relayOn, doorOpen: zone.controller.doorOpen)
        zone.model = model
        return zone.simulatedFault.map { .failure($0) } ?? .success(model.temperature)
    }

    /// Relays and defrost are logged (the zone's relay is the controller's decision; vendd does
    /// not yet drive a GPIO line with it); a trip goes to the machine.
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
                machine.send(.healthTripped(trip))
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

    /// The zone's lock was cleared: its controller gives it a fresh recovery window.
    func serviced(_ zone: ZoneID) {
        let now = self.now
        let actions = zones.withLock { zones -> [ZoneAction] in
            guard let index = zones.firstIndex(where: { $0.config.settings.id == zone }) else { return [] }
            return zones[index].controller.serviced(at: now)
        }
        perform(actions, zone: zone, reading: nil)
    }

    /// The cabinet door, which every zone shares.
    func setDoor(open: Bool) {
        let now = self.now
        let results = zones.withLock { zones in
            zones.indices.map { index in
                // The simulated cabinet moves on with the door as it was until now.
                if var model = zones[index].model {
                    model.advance(to: now, relayOn: zones[index].controller.relayOn, doorOpen: zones[index].controller.doorOpen)
                    zones[index].model = model
                }
                return (zones[index].config.settings.id, zones[index].controller.setDoor(open: open, at: now))
            }
        }
        for (zone, actions) in results { perform(actions, zone: zone, reading: nil) }
        logger.notice("cabinet door \(open ? "open" : "closed")", metadata: ["DOOR": open ? "open" : "closed"])
    }

    enum SimulationRefusal: Error {
        case unknownZone(known: [ZoneID])
        case notSimulated
    }

    /// `vendctl sim temp`: the simulated cabinet is at `value` now (the next read sees it).
    func setSimulatedTemperature(_ value: Temperature, zone: ZoneID) throws(SimulationRefusal) {
        let now = self.now
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
        let now = self.now
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
                    excursionSince: controller.excursion?.since.millisecondsSinceEpoch, excursionWorst: controller.excursion?.worst.decimalCelsius,
                    lock: lock)
            }
        }
    }
}
