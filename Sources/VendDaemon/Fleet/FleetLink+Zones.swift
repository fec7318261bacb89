import VendControl
import VendTelemetry

extension FleetLink {
    static let zoneInterval = Duration.seconds(60)
    /// How often the resend backoff of keep_until_stored is looked at (it counts in tens of seconds).
    static let resendCheck = Duration.seconds(1)

    /// A zone of `vendctl status` as its retained fleet message.
    static func zoneMessage(_ zone: StatusReport.Zone, machine: String) -> ZoneMessage {
        let health = zone.lock != nil ? "locked" : zone.excursionSince != nil ? "past-limit" : "ok"
        var message = ZoneMessage(machine: machine, zone: zone.id, kind: zone.kind, health: health)
        message.temperature = zone.temperature
        message.sensorFault = zone.sensorFault
        message.setPoint = zone.setPoint
        message.relayOn = zone.relayOn
        message.maxReached = zone.lock?.worst ?? zone.excursionWorst
        message.since = zone.lock?.since ?? zone.excursionSince
        message.cause = zone.lock?.cause
        return message
    }
}
