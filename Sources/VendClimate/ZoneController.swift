import VendingCore

/// Where a zone is in its defrost cycle.
public enum DefrostPhase: Hashable, Sendable {
    case idle
    /// The compressor rests (and the defrost heater runs, if there is one).
    case defrosting(since: Instant)
    /// Melt water runs off; the compressor stays off.
    case dripping(since: Instant)
}

/// A zone past its health limit outside any recovery window: since when, and the worst reached.
public struct Excursion: Hashable, Sendable {
    public let since: Instant
    public fileprivate(set) var worst: Temperature
}

/// What the shell must do, or should know, after a zone was told something.
public enum ZoneAction: Hashable, Sendable {
    /// Switch the zone's relay: the compressor of a cold zone, the heater of a hot one.
    case relay(Bool)
    /// Switch the defrost heater (defrost method `heater`).
    case defrostHeater(Bool)
    case defrost(DefrostPhase)
    /// The zone failed its health rule: the machine latches a lock on it.
    case tripped(HealthTrip)
}

/// One zone's thermostat, defrost and health rule as a pure state machine on instants it is
/// given: no clock, no I/O, so tests drive hours of cabinet life on manual time. The shell calls
/// `record`, `setDoor`, `serviced` and `tick` and carries out the actions in order.
///
/// The controller does not latch the health lock itself: it reports a trip once per excursion and
/// the machine keeps the lock as journaled state, so a restart (which starts a new controller)
/// never forgets it.
public struct ZoneController: Sendable {
    public let settings: ZoneSettings
    public private(set) var relayOn = false
    public private(set) var defrostHeaterOn = false
    public private(set) var doorOpen = false
    public private(set) var defrost = DefrostPhase.idle
    /// Compressor run time since the last defrost ended: what the defrost interval counts.
    public private(set) var runSinceDefrost = Duration.zero
    /// The last good reading; nil before the first one and while the sensor is faulty.
    public private(set) var temperature: Temperature?
    public private(set) var fault: SensorFault?
    public private(set) var excursion: Excursion?
    /// Every recovery window started so far ends by then (power-on, door close, defrost, service).
    public private(set) var recoveryEnds: Instant

    private let poweredOnAt: Instant
    /// When the relay last switched; nil: not since power-on.
    private var relaySwitchedAt: Instant?
    /// The sensor grace counts from here: the last good reading, power-on or service.
    private var silentSince: Instant
    private var lastEvaluated: Instant
    /// The previous evaluation was inside a recovery window (a window that ends with the zone
    /// still past its limit trips at once).
    private var wasRecovering = true
    private var excursionReported = false
    private var silenceReported = false

    public init(settings: ZoneSettings, poweredOnAt now: Instant) {
        self.settings = settings
        poweredOnAt = now
        silentSince = now
        lastEvaluated = now
        recoveryEnds = now + (settings.health?.recoveryAfterPowerOn ?? .zero)
    }

    /// A reading of the zone's sensors (a fault when any of them failed).
    public mutating func record(_ reading: Result<Temperature, SensorFault>, at now: Instant) -> [ZoneAction] {
        switch reading {
        case .success(let value):
            temperature = value
            fault = nil
            silentSince = now
            silenceReported = false
        case .failure(let failure):
            temperature = nil
            fault = failure
        }
        return evaluate(at: now)
    }

    /// The door switch: an open door pauses the health timer; closing it starts a recovery window.
    public mutating func setDoor(open: Bool, at now: Instant) -> [ZoneAction] {
        if doorOpen && !open { extendRecovery(to: now + (settings.health?.recoveryAfterDoor ?? .zero)) }
        doorOpen = open
        return evaluate(at: now)
    }

    /// A technician serviced the zone (cleared its lock): it gets the recovery time a door close
    /// gives, and its sensor a fresh grace, before it can trip again.
    public mutating func serviced(at now: Instant) -> [ZoneAction] {
        extendRecovery(to: now + (settings.health?.recoveryAfterDoor ?? .zero))
        silentSince = max(silentSince, now)
        silenceReported = false
        excursion = nil
        excursionReported = false
        return evaluate(at: now)
    }

    /// Time passed: minimum times, defrost phases, trip timers.
    public mutating func tick(at now: Instant) -> [ZoneAction] { evaluate(at: now) }

    public func isRecovering(at now: Instant) -> Bool { doorOpen || defrost != .idle || now < recoveryEnds }

    // MARK: - Evaluation

    private mutating func evaluate(at now: Instant) -> [ZoneAction] {
        // The relay only switches here, so it was as it is now for the whole span.
        if now > lastEvaluated {
            if relayOn && settings.kind == .cold { runSinceDefrost += now - lastEvaluated }
            lastEvaluated = now
        }
        var actions: [ZoneAction] = []
        stepDefrost(at: now, into: &actions)
        stepThermostat(at: now, into: &actions)
        stepHealth(at: now, into: &actions)
        return actions
    }

    private mutating func extendRecovery(to end: Instant) { recoveryEnds = max(recoveryEnds, end) }

    private func mayStart(at now: Instant) -> Bool {
        guard let thermostat = settings.thermostat else { return false }
        guard now >= poweredOnAt + thermostat.startDelay else { return false }
        return relaySwitchedAt.map { now - $0 >= thermostat.minimumOff } ?? true
    }

    private func mayStop(at now: Instant) -> Bool {
        guard let thermostat = settings.thermostat else { return true }
        return relaySwitchedAt.map { now - $0 >= thermostat.minimumOn } ?? true
    }

    private mutating func switchRelay(_ on: Bool, at now: Instant, into actions: inout [ZoneAction]) {
        guard on != relayOn else { return }
        relayOn = on
        relaySwitchedAt = now
        actions.append(.relay(on))
    }

    private mutating func setDefrost(_ phase: DefrostPhase, into actions: inout [ZoneAction]) {
        defrost = phase
        actions.append(.defrost(phase))
    }

    private mutating func stepDefrost(at now: Instant, into actions: inout [ZoneAction]) {
        guard let settings = settings.defrost else { return }
        switch defrost {
        case .idle:
            // The compressor's minimum run is kept even for a defrost.
            guard runSinceDefrost >= settings.interval, !relayOn || mayStop(at: now) else { return }
            switchRelay(false, at: now, into: &actions)
            setDefrost(.defrosting(since: now), into: &actions)
            if settings.method == .heater {
                defrostHeaterOn = true
                actions.append(.defrostHeater(true))
            }
        case .defrosting(let since):
            let warmEnough = temperature.map { $0 >= settings.termination } ?? false
            guard warmEnough || now - since >= settings.maximumDuration else { return }
            if defrostHeaterOn {
                defrostHeaterOn = false
                actions.append(.defrostHeater(false))
            }
            setDefrost(.dripping(since: now), into: &actions)
        case .dripping(let since):
            guard now - since >= settings.drip else { return }
            runSinceDefrost = .zero
            extendRecovery(to: now + (self.settings.health?.recoveryAfterDefrost ?? .zero))
            setDefrost(.idle, into: &actions)
        }
    }

    /// Hysteresis around the set point; no temperature (a faulty sensor) or a defrost means off:
    /// the controller cannot tell freezing from warming, and the health rule's grace protects the food.
    private mutating func stepThermostat(at now: Instant, into actions: inout [ZoneAction]) {
        guard let thermostat = settings.thermostat else { return }
        var demand = false
        if defrost == .idle, let temperature {
            let half = Temperature(millidegreesCelsius: thermostat.differential.millidegreesCelsius / 2)
            let (cutIn, cutOut) =
                settings.kind == .hot
                ? (temperature <= thermostat.setPoint - half, temperature >= thermostat.setPoint + half)
                : (temperature >= thermostat.setPoint + half, temperature <= thermostat.setPoint - half)
            demand = cutIn || (relayOn && !cutOut)
        }
        if demand && !relayOn && mayStart(at: now) { switchRelay(true, at: now, into: &actions) }
        if !demand && relayOn && mayStop(at: now) { switchRelay(false, at: now, into: &actions) }
    }

    private mutating func stepHealth(at now: Instant, into actions: inout [ZoneAction]) {
        guard let rule = settings.health else { return }
        if now - silentSince >= rule.sensorGrace, !silenceReported {
            silenceReported = true
            let cause = HealthTripCause.sensorFault(fault ?? .unreadable("no reading"))
            actions.append(.tripped(HealthTrip(zone: settings.id, cause: cause, since: silentSince, worst: nil)))
        }
        // Without a temperature the excursion neither starts nor ends: the grace above decides.
        guard let temperature else { return }
        if isRecovering(at: now) {
            excursion = nil
            excursionReported = false
            wasRecovering = true
            return
        }
        defer { wasRecovering = false }
        guard settings.kind.isPast(rule.limit, temperature) else {
            excursion = nil
            excursionReported = false
            return
        }
        let windowJustEnded = excursion == nil && wasRecovering
        if var current = excursion {
            current.worst = settings.kind.worse(current.worst, temperature)
            excursion = current
        } else {
            excursion = Excursion(since: now, worst: temperature)
        }
        guard let excursion, !excursionReported, windowJustEnded || now - excursion.since >= rule.tripTime else { return }
        excursionReported = true
        let trip = HealthTrip(zone: settings.id, cause: .temperature(limit: rule.limit), since: excursion.since, worst: excursion.worst)
        actions.append(.tripped(trip))
    }
}
