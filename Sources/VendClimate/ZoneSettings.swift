import VendingCore

/// What a zone keeps: cold (a refrigerated cabinet, a compressor), hot (a heated column, a heater)
/// or ambient (watched only: no relay, no health rule).
public enum ZoneKind: String, Hashable, Sendable, Codable, CaseIterable {
    case cold, hot, ambient

    /// Past `limit` in the direction that spoils food: warmer for cold, cooler for hot.
    public func isPast(_ limit: Temperature, _ temperature: Temperature) -> Bool {
        switch self {
        case .cold: temperature > limit
        case .hot: temperature < limit
        case .ambient: false
        }
    }

    /// The worse of two temperatures for this kind of zone.
    public func worse(_ a: Temperature, _ b: Temperature) -> Temperature {
        self == .hot ? min(a, b) : max(a, b)
    }
}

/// The thermostat: a set point with a differential around it (cut in at set point + Δ/2, cut
/// out at set point − Δ/2 for cold; the mirror for hot), and the compressor protection every
/// refrigeration controller has: a minimum run, a minimum rest and a start delay after power-on
/// (a compressor restarted against its own head pressure stalls and overheats).
public struct ThermostatSettings: Hashable, Sendable {
    public var setPoint: Temperature
    public var differential: Temperature
    public var minimumOn: Duration
    public var minimumOff: Duration
    public var startDelay: Duration

    public init(
        setPoint: Temperature, differential: Temperature, minimumOn: Duration = .seconds(150), minimumOff: Duration = .seconds(150),
        startDelay: Duration = .seconds(150)
    ) {
        self.setPoint = setPoint
        self.differential = differential
        self.minimumOn = minimumOn
        self.minimumOff = minimumOff
        self.startDelay = startDelay
    }
}

/// Defrost by compressor run time: after `interval` of running, the compressor rests (off-cycle)
/// or a heater warms the coil, until the zone reaches `termination` or `maximumDuration` passed;
/// then `drip` lets the melt water run off before the compressor may start again.
public struct DefrostSettings: Hashable, Sendable {
    public enum Method: String, Hashable, Sendable, CaseIterable {
        case offCycle = "off-cycle"
        case heater
    }

    public var method: Method
    public var interval: Duration
    public var termination: Temperature
    public var maximumDuration: Duration
    public var drip: Duration

    public init(method: Method, interval: Duration, termination: Temperature, maximumDuration: Duration, drip: Duration) {
        self.method = method
        self.interval = interval
        self.termination = termination
        self.maximumDuration = maximumDuration
        self.drip = drip
    }
}

/// The food-safety rule (Food Code 4-204.111 and the controllers in the research notes): past
/// `limit` for longer than `tripTime` outside a recovery window trips the zone; a window that ends
/// with the zone still past its limit trips it at once (it was given its time to recover); no good
/// reading for `sensorGrace` trips it too.
public struct HealthRule: Hashable, Sendable {
    public var limit: Temperature
    public var tripTime: Duration
    public var recoveryAfterDoor: Duration
    public var recoveryAfterDefrost: Duration
    public var recoveryAfterPowerOn: Duration
    public var sensorGrace: Duration

    public init(
        limit: Temperature, tripTime: Duration = .seconds(15 * 60), recoveryAfterDoor: Duration = .seconds(30 * 60),
        recoveryAfterDefrost: Duration = .seconds(30 * 60), recoveryAfterPowerOn: Duration = .seconds(30 * 60),
        sensorGrace: Duration = .seconds(5 * 60)
    ) {
        self.limit = limit
        self.tripTime = tripTime
        self.recoveryAfterDoor = recoveryAfterDoor
        self.recoveryAfterDefrost = recoveryAfterDefrost
        self.recoveryAfterPowerOn = recoveryAfterPowerOn
        self.sensorGrace = sensorGrace
    }

    /// 5 °C (41 °F) for cold and 57 °C (135 °F) for hot, the Food Code's figures; hot food is
    /// allowed 120 minutes to come back after service.
    public static func defaults(for kind: ZoneKind) -> HealthRule? {
        switch kind {
        case .cold: HealthRule(limit: .celsius(5))
        case .hot: HealthRule(limit: .celsius(57), recoveryAfterDoor: .seconds(120 * 60), recoveryAfterPowerOn: .seconds(120 * 60))
        case .ambient: nil
        }
    }
}

/// One zone as configured.
public struct ZoneSettings: Hashable, Sendable {
    public var id: ZoneID
    public var kind: ZoneKind
    /// Nil: no relay (an ambient zone, or a cabinet whose own thermostat runs the compressor).
    public var thermostat: ThermostatSettings?
    public var defrost: DefrostSettings?
    /// Nil: the zone is watched, never locked.
    public var health: HealthRule?

    public init(id: ZoneID, kind: ZoneKind, thermostat: ThermostatSettings?, defrost: DefrostSettings? = nil, health: HealthRule?) {
        self.id = id
        self.kind = kind
        self.thermostat = thermostat
        self.defrost = defrost
        self.health = health
    }
}
