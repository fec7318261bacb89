import VendClimate
import VendConfig
import VendControl
import VendPOSIX
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// `vendctl zone service` and `vendctl sim door|temp|sensor-fault`: the technician's side of the
/// temperature zones, and their simulation.
extension CommandHandler {
    /// Clears a zone's health lock (service mode only, the machine checks), recorded with who.
    static func serviceZone(_ zone: String, peer: UnixSocket.PeerCredentials?, controller: MachineController) -> ControlResponse {
        let id = ZoneID(zone)
        let known = controller.config.zones.map(\.settings.id)
        // A zone the file no longer names may still hold a lock: it can be serviced too.
        guard known.contains(id) || controller.currentMachine.healthLocks[id] != nil else {
            return .failure(ControlError(.badRequest, "no zone '\(zone)' (zones: \(known.map(\.rawValue).joined(separator: ", ")))"))
        }
        let technician = technicianName(peer)
        for event in controller.sendAndWait(.healthServiced(id, technician: technician)).events {
            switch event {
            case .rejected(let reason): return .failure(ControlError(.rejected, reason.description))
            case .healthLockCleared:
                controller.climate.withLock { $0 }?.serviced(id)
                return .success("zone \(zone) serviced by \(technician): its perishable slots sell again")
            default: continue
            }
        }
        return .failure(ControlError(.internal, "the machine did not answer the service of zone \(zone)"))
    }

    /// `vendctl temps`: the zones' recent temperatures, in the unit the file asks to show them in.
    static func temps(zone: String?, minutes: Int?, controller: MachineController) -> ControlResponse {
        guard let climate = controller.climate.withLock({ $0 }) else {
            return .failure(ControlError(.badRequest, "this machine has no temperature zones (zones: in the file)"))
        }
        if let minutes, minutes < 1 { return .failure(ControlError(.badRequest, "minutes must be at least 1, not \(minutes)")) }
        do {
            let zones = try climate.history.report(zone: zone.map { ZoneID($0) }, minutes: minutes, now: controller.now)
            return .answer(.temps(TempsReport(temperatureUnit: controller.config.machine.temperatureUnit.rawValue, zones: zones)))
        } catch {
            switch error {
            case .unknownZone(let known):
                return .failure(ControlError(.badRequest, "no zone '\(zone ?? "")' (zones: \(known.map(\.rawValue).joined(separator: ", ")))"))
            }
        }
    }

    /// "kim (uid 1001)": who the kernel says is at the other end of the socket.
    static func technicianName(_ peer: UnixSocket.PeerCredentials?) -> String {
        guard let peer else { return "unknown" }
        guard let user = getpwuid(peer.uid) else { return "uid \(peer.uid)" }
        return "\(String(cString: user.pointee.pw_name)) (uid \(peer.uid))"
    }

    static func simulateDoor(open: Bool, controller: MachineController) -> ControlResponse {
        guard let climate = controller.climate.withLock({ $0 }) else {
            return .failure(ControlError(.badRequest, "this machine has no temperature zones (zones: in the file)"))
        }
        guard climate.isSimulated else { return notSimulated }
        climate.setDoor(open: open)
        return .success(open ? "opened the cabinet door" : "closed the cabinet door")
    }

    static func simulateTemperature(zone: String, value: String, controller: MachineController) -> ControlResponse {
        guard let temperature = Temperature(decimalCelsius: value) else {
            return .failure(ControlError(.badRequest, "'\(value)' is not a temperature: give degrees Celsius, e.g. 4 or 7.5"))
        }
        return simulateZone(zone, controller: controller, done: "zone \(zone)'s cabinet is at \(value) °C") {
            climate throws(ClimateService.SimulationRefusal) in
            try climate.setSimulatedTemperature(temperature, zone: ZoneID(zone))
        }
    }

    static let simulatedFaults: [String: SensorFault?] = ["missing": .missing, "crc": .crcMismatch, "85": .powerOnValue, "clear": nil]

    static func simulateSensorFault(zone: String, fault: String, controller: MachineController) -> ControlResponse {
        guard let chosen = simulatedFaults[fault] else {
            return .failure(ControlError(.badRequest, "unknown sensor fault '\(fault)' (known: missing, crc, 85, clear)"))
        }
        let done = chosen.map { "zone \(zone)'s sensors report: \($0)" } ?? "zone \(zone)'s sensors read again"
        return simulateZone(zone, controller: controller, done: done) { climate throws(ClimateService.SimulationRefusal) in
            try climate.setSimulatedFault(chosen, zone: ZoneID(zone))
        }
    }

    private static func simulateZone(
        _ zone: String, controller: MachineController, done: String, _ change: (ClimateService) throws(ClimateService.SimulationRefusal) -> Void
    ) -> ControlResponse {
        guard let climate = controller.climate.withLock({ $0 }) else {
            return .failure(ControlError(.badRequest, "this machine has no temperature zones (zones: in the file)"))
        }
        do {
            try change(climate)
            return .success(done)
        } catch {
            switch error {
            case .notSimulated: return notSimulated
            case .unknownZone(let known):
                return .failure(ControlError(.badRequest, "no zone '\(zone)' (zones: \(known.map(\.rawValue).joined(separator: ", ")))"))
            }
        }
    }
}
