import VendingCore

/// Which of a zone's trip conditions (past the limit, a silent sensor) the machine may still
/// hold as an incident under way, so that the shell says when each is over: the incident's end
/// is when the condition cleared, not when the zone was serviced.
///
/// At start both count as open: the machine may hold incidents from before a restart, and the
/// first reading that shows a condition clear ends them (the machine ignores an end of what is
/// not under way).
public struct ZoneConditionWatch: Sendable {
    private var open: Set<ZoneCondition> = [.overLimit, .sensorFault]

    public init() {}

    /// The conditions that `reading` shows over, after the controller's `actions` for it.
    public mutating func cleared(
        after actions: [ZoneAction], reading: Result<Temperature, SensorFault>, settings: ZoneSettings
    ) -> [ZoneCondition] {
        for case .tripped(let trip) in actions {
            switch trip.cause {
            case .temperature: open.insert(.overLimit)
            case .sensorFault: open.insert(.sensorFault)
            }
        }
        guard case .success(let temperature) = reading else { return [] }
        var cleared: [ZoneCondition] = []
        if open.remove(.sensorFault) != nil { cleared.append(.sensorFault) }
        let past = settings.health.map { settings.kind.isPast($0.limit, temperature) } ?? false
        if !past, open.remove(.overLimit) != nil { cleared.append(.overLimit) }
        return cleared
    }
}
