import VendingCore

/// A cabinet's temperature for `vendd --simulate`: it drifts towards the room with the relay off,
/// faster with the door open, and is driven away from it with the relay on (cooled by a
/// compressor, heated by a heater). Deliberately crude: it exists so that cycles, a defrost, a
/// door left open and a lockout can be watched in minutes, on the instants it is given.
public struct CabinetModel: Sendable {
    public let kind: ZoneKind
    public private(set) var temperature: Temperature
    private var at: Instant

    /// The room around the machine.
    static let room = Temperature.celsius(22)

    public init(kind: ZoneKind, temperature: Temperature, at now: Instant) {
        self.kind = kind
        self.temperature = temperature
        at = now
    }

    /// Moves the model on to `now` with the relay and door as they were since the last step.
    public mutating func advance(to now: Instant, relayOn: Bool, doorOpen: Bool) {
        let seconds = Int((now - at).wholeMilliseconds / 1_000)
        guard seconds > 0 else { return }
        at = at + .seconds(seconds)
        // Millidegrees per second: a compressor pulls 1.2 °C a minute, a heater pushes 1.8;
        // the room pulls 0.5 °C a minute, 2.4 with the door open.
        let drift = (doorOpen ? 40 : 8) * seconds
        let drive = kind == .cold ? -20 * seconds : 30 * seconds
        var value = temperature.millidegreesCelsius
        if relayOn && kind != .ambient { value += drive }
        let room = Self.room.millidegreesCelsius
        value = value < room ? min(room, value + drift) : max(room, value - drift)
        temperature = Temperature(millidegreesCelsius: value)
    }

    /// `vendctl sim temp`: the cabinet is at `value` now.
    public mutating func set(_ value: Temperature, at now: Instant) {
        temperature = value
        at = now
    }
}
