import VendControl
import VendingCore

extension Status {
    /// One line per zone: temperature against set point, relay, defrost, door, and its health:
    /// ok, an excursion under way, or the lock with its cause, worst temperature and since when;
    /// in the unit the machine's file asks for (`machine.temperature_unit`).
    static func zoneLines(_ zones: [StatusReport.Zone], unit: TemperatureUnit) -> [String] {
        zones.map { zone in
            let reading = zone.temperature.map(unit.text(decimalCelsius:)) ?? "NO READING (\(zone.sensorFault ?? "not read yet"))"
            var parts = ["zone     \(zone.id) (\(zone.kind)) \(reading)"]
            if let setPoint = zone.setPoint { parts.append("set \(unit.text(decimalCelsius: setPoint))") }
            if let relay = zone.relayOn { parts.append("relay \(relay ? "on" : "off")") }
            if zone.defrost != "idle" { parts.append(zone.defrost) }
            if zone.doorOpen { parts.append("door open") }
            if let lock = zone.lock {
                let worst = lock.worst.map { ", worst \(unit.text(decimalCelsius: $0))" } ?? ""
                parts.append(
                    "HEALTH LOCKED: \(lock.cause)\(worst) since \(dateText(lock.since)), locked \(dateText(lock.lockedAt)); service it: vendctl zone service \(zone.id)"
                )
            } else if let since = zone.excursionSince {
                parts.append("health: past its limit since \(dateText(since)) (worst \(zone.excursionWorst.map(unit.text(decimalCelsius:)) ?? "?"))")
            } else {
                parts.append(zone.recovering ? "health ok (recovering)" : "health ok")
            }
            return parts.joined(separator: ", ")
        }
    }
}
