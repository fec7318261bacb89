import Foundation
import Testing
import VendingCore

/// Incidents, what the DEX audit reports as events: begun and ended by the inputs that lock and
/// clear zones and slots, counted since the machine was new and since the last DEX read, and
/// saved with the machine.
@Suite struct IncidentTests {
    static let chilledTrip = HealthTrip(
        zone: "chilled", cause: .temperature(limit: .celsius(5)), since: Fixtures.start, worst: Temperature(millidegreesCelsius: 8_400))

    @Test func aTemperatureTripBeginsTheLockAndTheExcursionWhichEndSeparately() {
        var rig = Rig(setup: HealthLockTests.zonedSetup())
        rig.advance(seconds: 900)
        rig.apply(.healthTripped(Self.chilledTrip))
        let lockedAt = rig.now
        #expect(rig.machine.incidents[.healthLock("chilled")] == IncidentRecord(lastStart: lockedAt, detail: "temperature past the limit of 5.0 °C"))
        #expect(rig.machine.incidents[.overLimit("chilled")] == IncidentRecord(lastStart: Fixtures.start, detail: "worst 8.4 °C"))
        rig.advance(seconds: 1_200)
        rig.apply(.zoneConditionCleared("chilled", .overLimit))
        #expect(rig.machine.incidents[.overLimit("chilled")]?.lastEnd == rig.now, "back within the limit")
        #expect(rig.machine.incidents[.healthLock("chilled")]?.isActive == true, "the lock waits for service")
        rig.apply(.setServiceMode(true))
        rig.advance(seconds: 600)
        rig.apply(.healthServiced("chilled", technician: "kim"))
        let lock = rig.machine.incidents[.healthLock("chilled")]
        #expect(lock?.lastEnd == rig.now && lock?.occurrences == 1)
        #expect(lock?.duration(at: rig.now) == .seconds(1_800))
    }

    @Test func aSecondTripOfALockedZoneStillBeginsItsSensorIncident() {
        var rig = Rig(setup: HealthLockTests.zonedSetup())
        rig.apply(.healthTripped(Self.chilledTrip))
        rig.advance(seconds: 600)
        let silent = HealthTrip(
            zone: "chilled", cause: .sensorFault(.missing), since: Instant(millisecondsSinceEpoch: Fixtures.start.millisecondsSinceEpoch + 300_000),
            worst: nil)
        rig.apply(.healthTripped(silent))
        #expect(rig.machine.incidents[.sensorFault("chilled")] == IncidentRecord(lastStart: silent.since, detail: "sensor missing"))
        #expect(rig.machine.incidents[.healthLock("chilled")]?.occurrences == 1, "still the one lock")
        rig.apply(.zoneConditionCleared("chilled", .sensorFault))
        rig.apply(.zoneConditionCleared("chilled", .sensorFault))
        #expect(rig.machine.incidents[.sensorFault("chilled")]?.lastEnd == rig.now, "a second end changes nothing")
    }

    @Test func aSlotFaultIsAMotorIncidentUntilCleared() {
        var rig = Rig()
        rig.apply(.slotFaultFound("A1", .awayFromHome))
        rig.advance(seconds: 120)
        rig.technicianClears("A1", by: "kim")
        rig.advance(seconds: 60)
        rig.apply(.slotFaultFound("A1", .jammed))
        let record = rig.machine.incidents[.motorFault("A1")]
        #expect(record?.occurrences == 2 && record?.detail == "jammed" && record?.lastStart == rig.now && record?.isActive == true)
    }

    @Test func aSlotRemovedWithItsFaultEndsItsIncident() {
        var rig = Rig()
        rig.apply(.slotFaultFound("A1", .jammed))
        rig.advance(seconds: 60)
        rig.apply(.reconfigure(Fixtures.setup(slots: Array(rig.machine.setup.slots.dropFirst()))))
        #expect(rig.machine.slotFaults.isEmpty)
        #expect(rig.machine.incidents[.motorFault("A1")]?.lastEnd == rig.now)
    }

    /// EVA-DTS 6.1.1 §2.8.2: a read resets only events no longer active; one active at the read
    /// is reported again by the next, once, until it ended and was read.
    @Test func aReadResetsTheCountsOfEndedIncidentsOnly() {
        var rig = Rig()
        rig.apply(.slotFaultFound("A1", .jammed))
        rig.technicianClears("A1", by: "kim")
        rig.apply(.slotFaultFound("A1", .jammed))
        rig.apply(.slotFaultFound("A2", .motorMissing))
        rig.technicianClears("A2", by: "kim")
        #expect(rig.machine.occurrencesSinceRead(of: .motorFault("A1")) == 2)
        rig.apply(.auditRead(rig.machine.auditTotals))
        #expect(rig.machine.occurrencesSinceRead(of: .motorFault("A1")) == 1, "active at the read: not reset")
        #expect(rig.machine.occurrencesSinceRead(of: .motorFault("A2")) == 0)
        rig.technicianClears("A1", by: "kim")
        #expect(rig.machine.occurrencesSinceRead(of: .motorFault("A1")) == 1, "ended after the read: reported once more")
        rig.apply(.auditRead(rig.machine.auditTotals))
        #expect(rig.machine.occurrencesSinceRead(of: .motorFault("A1")) == 0)
        #expect(rig.machine.incidents[.motorFault("A1")]?.occurrences == 2, "since initialisation is never reset")
    }

    @Test func incidentsAndTheirReadBaseAreSaved() throws {
        var rig = Rig(setup: HealthLockTests.zonedSetup())
        rig.apply(.healthTripped(Self.chilledTrip))
        rig.apply(.slotFaultFound("A2", .jammed))
        rig.apply(.auditRead(rig.machine.auditTotals))
        let json = try JSONEncoder().encode(rig.machine)
        #expect(String(decoding: json, as: UTF8.self).contains("\"motor-fault A2\""))
        let restored = try JSONDecoder().decode(Machine.self, from: json)
        #expect(restored == rig.machine)
        #expect(restored.lastAuditRead?.incidents == [.healthLock("chilled"): 0, .overLimit("chilled"): 0, .motorFault("A2"): 0])
    }
}

extension IncidentRecord {
    /// A first occurrence, under way.
    init(lastStart: Instant, detail: String) {
        self.init(occurrences: 1, lastStart: lastStart, lastEnd: nil, detail: detail)
    }
}
