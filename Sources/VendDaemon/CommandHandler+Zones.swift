import VendClimate
import VendConfig
import VendControl
import VendHardware
import VendPOSIX
import VendSettings
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
            guard !known.isEmpty else { return .failure(ControlError(.badRequest, noZones)) }
            return .failure(ControlError(.badRequest, "no zone '\(zone)' (zones: \(known.map(\.rawValue).joined(separator: ", ")))"))
        }
        let technician = technicianName(peer)
        for event in controller.sendAndWait(.healthServiced(id, technician: technician)).events {
            switch event {
            case .rejected(let reason): return .failure(ControlError(.rejected, reason.description))
            case .healthLockCleared:
                let done = "zone \(zone) serviced by \(technician): its perishable slots sell again"
                // The machine's lane told the zone's controller (a fresh recovery window).
                guard let still = controller.climate.withLock({ $0 })?.pastLimit(id) else { return .success(done) }
                let unit = controller.config.machine.temperatureUnit
                return .success(
                    "\(done), but it is still too \(still.kind == .cold ? "warm" : "cool"): \(unit.text(still.temperature)), past its limit of \(unit.text(still.limit)). Its recovery window of \(minutes(still.recovery)) starts now: unless it is back within the limit by then, it locks again"
                )
            default: continue
            }
        }
        return .failure(ControlError(.internal, "the machine did not answer the service of zone \(zone)"))
    }

    static let noZones = "this machine has no temperature zones (zones: in the file)"

    /// "30 min", "90 s": a recovery window as a technician reads it.
    private static func minutes(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        return seconds >= 60 && seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    /// `vendctl temps`: the zones' recent temperatures, in the unit the file asks to show them in.
    static func temps(zone: String?, minutes: Int?, controller: MachineController) -> ControlResponse {
        guard let climate = controller.climate.withLock({ $0 }) else {
            return .failure(ControlError(.badRequest, noZones))
        }
        if let minutes, minutes < 1 { return .failure(ControlError(.badRequest, "minutes must be at least 1, not \(minutes)")) }
        do {
            let zones = try climate.history.report(zone: zone.map { ZoneID($0) }, minutes: minutes, now: controller.requests.now)
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

    /// `vendctl sim door`: the door switch, through the same input as the GPIO door line (service
    /// mode, and the zones' cabinet door); answered once the machine has it. A machine with zones
    /// but no door switch still gets its cabinet door moved, for the zone model.
    static func simulateDoor(open: Bool, controller: MachineController) -> ControlResponse {
        guard let world = controller.simulatedWorld else { return notSimulated }
        let verb = open ? "opened" : "closed"
        guard controller.config.buttons.contains(where: { $0.action == .door }) else {
            guard let climate = controller.climate.withLock({ $0 }) else {
                return .failure(
                    ControlError(.rejected, "the configuration has no door switch (add `- { action: door, line: N }` under buttons:)"))
            }
            climate.setDoor(open: open)
            return .success("\(verb) the cabinet door for the zones (the configuration has no door switch: service mode does not follow it)")
        }
        if controller.switches.doorOpen != open {
            do {
                try world.set(.door, active: open)
            } catch {
                return .failure(ControlError(.rejected, error.description))
            }
            // The line is debounced like a real one: answered once the machine has heard it (and
            // told the zones) and carried it out.
            guard controller.waitForView(within: .seconds(5), until: { $0.switches.doorOpen == open }) else {
                return .failure(ControlError(.internal, "the door switch was \(verb) but vendd did not see it within 5 s"))
            }
            controller.settle()
        }
        let switches = controller.switches
        if open { return .success("\(verb) the door: the machine is in service mode") }
        guard switches.isOn else { return .success("\(verb) the door: the machine is back in service") }
        return .success("\(verb) the door: still in service mode (\(switches.reasons.joined(separator: ", ")))")
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
            return .failure(ControlError(.badRequest, noZones))
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
