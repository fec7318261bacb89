import VendControl

extension Status {
    /// One line per zone: temperature against set point, relay, defrost, door, and its health:
    /// ok, an excursion under way, or the lock with its cause, worst temperature and since when.
    static func zoneLines(_ zones: [StatusReport.Zone]) -> [String] {
        zones.map { zone in
            let reading = zone.temperature.map { "\($0) °C" } ?? "NO READING (\(zone.sensorFault ?? "not read yet"))"
            var parts = ["zone     \(zone.id) (\(zone.kind)) \(reading)"]
            if let setPoint = zone.setPoint { parts.append("set \(setPoint) °C") }
            if let relay = zone.relayOn { parts.append("relay \(relay ? "on" : "off")") }
            if zone.defrost != "idle" { parts.append(zone.defrost) }
            if zone.doorOpen { parts.append("door open") }
            if let lock = zone.lock {
                let worst = lock.worst.map { ", worst \($0) °C" } ?? ""
                parts.append(
                    "HEALTH LOCKED: \(lock.cause)\(worst) since \(dateText(lock.since)), locked \(dateText(lock.lockedAt)); service it: vendctl zone service \(zone.id)"
                )
            } else if let since = zone.excursionSince {
                parts.append("health: past its limit since \(dateText(since)) (worst \(zone.excursionWorst ?? "?") °C)")
            } else {
                parts.append(zone.recovering ? "health ok (recovering)" : "health ok")
            }
            return parts.joined(separator: ", ")
        }
    }
}
