import VendingCore

extension ZoneKind {
    /// One reading for the zone from all its sensors: the worst of them (the warmest part of a
    /// cold cabinet is where food spoils first, the coolest of a hot one), or the first fault,
    /// since a zone with a blind sensor cannot vouch for that part of the cabinet.
    public func reading(of readings: [Result<Temperature, SensorFault>]) -> Result<Temperature, SensorFault> {
        var worst: Temperature?
        for reading in readings {
            switch reading {
            case .failure: return reading
            case .success(let value): worst = worst.map { self.worse($0, value) } ?? value
            }
        }
        return worst.map { .success($0) } ?? .failure(.missing)
    }
}
