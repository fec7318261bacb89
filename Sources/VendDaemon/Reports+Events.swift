import VendControl
import VendDEX
import VendingCore

extension Reports {
    /// Every incident the DEX audit reports, zones in the file's order then slots in theirs.
    /// A zone's events carry its number (1 for the first zone in the file) when the machine has
    /// several; over-limit incidents are refrigeration events (EJJ) in cold zones only: EVA-DTS
    /// has no code for a hot zone that cannot keep warm, whose lock (EJH) still says so.
    func events(at now: Instant) -> [SalesReport.Event] {
        // Zones the file no longer names but whose incidents are kept come after, by name.
        let incidentZones: Set<ZoneID> = Set(machine.incidents.keys.filter { $0.kind != .motorFault }.map { ZoneID($0.subject) })
        let removedZones: [ZoneID] = incidentZones.subtracting(zoneOrder).sorted()
        let zones: [ZoneID] = zoneOrder + removedZones
        let slots = machine.setup.slots.map(\.id)
        func number(_ zone: String) -> Int? {
            guard zones.count > 1, let index = zones.firstIndex(of: ZoneID(zone)) else { return nil }
            return index + 1
        }
        func code(_ incident: Incident) -> String? {
            switch incident.kind {
            case .healthLock: DEXAudit.EventCode.healthTimer(zone: number(incident.subject))
            case .overLimit: coldZones.contains(ZoneID(incident.subject)) ? DEXAudit.EventCode.refrigeration(zone: number(incident.subject)) : nil
            case .sensorFault: DEXAudit.EventCode.temperatureSensor(zone: number(incident.subject))
            case .motorFault: DEXAudit.EventCode.dispenseMotor(selection: incident.subject)
            }
        }
        func position(_ incident: Incident) -> Int {
            let subjects = incident.kind == .motorFault ? slots.map(\.rawValue) : zones.map(\.rawValue)
            return subjects.firstIndex(of: incident.subject) ?? subjects.count
        }
        // Zones first, then slots, each in the file's order; then by kind.
        func key(_ incident: Incident) -> (Int, Int, Incident) {
            let group: Int = incident.kind == .motorFault ? 1 : 0
            return (group, position(incident), incident)
        }
        let ordered = machine.incidents.keys.sorted { key($0) < key($1) }
        return ordered.compactMap { incident in
            guard let record = machine.incidents[incident], let code = code(incident) else { return nil }
            return SalesReport.Event(
                code: code, kind: incident.kind.rawValue, subject: incident.subject, detail: record.detail, occurrences: record.occurrences,
                sinceLastRead: machine.occurrencesSinceRead(of: incident), active: record.isActive,
                startedAt: record.lastStart.millisecondsSinceEpoch, endedAt: record.lastEnd?.millisecondsSinceEpoch,
                durationMinutes: Int(record.duration(at: now).components.seconds / 60))
        }
    }
}
