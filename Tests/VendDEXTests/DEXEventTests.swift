import Testing

@testable import VendDEX

/// EA1 and EA2 as EVA-DTS 6.1.1 lays them out (§2.8.3 examples, data dictionary p.231–232).
@Suite struct DEXEventTests {
    /// Example 3 of §2.8.3 (p.50–51): the door event, over, and the refrigeration event still
    /// under way, written element for element as the specification prints them.
    @Test func theSpecificationsExampleIsWrittenExactly() {
        let door = DEXAudit.Event(
            code: "EGS", startedAt: 1_024_929_000_000, durationMinutes: 52, sinceReset: 4, sinceInitialisation: 36, active: false)
        let refrigeration = DEXAudit.Event(
            code: "EJJ", startedAt: 1_024_930_800_000, durationMinutes: 22, sinceReset: 1, sinceInitialisation: 2, active: true)
        #expect(
            (door.segments + refrigeration.segments).map(DEXWriter.segment) == [
                "EA1*EGS*020624*1430*52\r\n",
                "EA2*EGS*4*36**0\r\n",
                "EA1*EJJ*020624*1500*22\r\n",
                "EA2*EJJ*1*2**1\r\n",
            ])
    }

    /// Health and motor events follow the selections, before G85; one neither active nor new
    /// since the last reset is not sent (§2.8.1), and SE01 counts what is.
    @Test func eventsFollowTheSelectionsAndOnlyReportedOnesAreSent() {
        var audit = DEXAudit(
            communicationID: "VDD0000001", assetNumber: "VM-7", location: "", decimalPlaces: 2, currencyCode: "EUR",
            selections: [.init(id: "A1", price: 150, vends: 0, value: 0)], cash: .init(coinsIn: 0))
        audit.events = [
            // Locked at 23:05 local (UTC+1), 95 minutes ago, the first time.
            .init(
                code: DEXAudit.EventCode.healthTimer(zone: 2), startedAt: 1_795_734_300_000, secondsEast: 3_600, durationMinutes: 95,
                sinceReset: 1, sinceInitialisation: 1, active: true),
            .init(
                code: DEXAudit.EventCode.temperatureSensor(zone: 2), startedAt: 1_795_734_300_000, secondsEast: 3_600, durationMinutes: 3,
                sinceReset: 0, sinceInitialisation: 4, active: false),
            .init(
                code: DEXAudit.EventCode.dispenseMotor(selection: "A1"), startedAt: 1_795_734_300_000, durationMinutes: 0,
                sinceReset: 2, sinceInitialisation: 7, active: false),
        ]
        let segments = DEXWriter.file(audit).components(separatedBy: "\r\n")
        let pa4 = segments.firstIndex(of: "PA4*0")!
        #expect(
            Array(segments[(pa4 + 1)...(pa4 + 5)]) == [
                "EA1*EJH_2*261127*0005*95",
                "EA2*EJH_2*1*1**1",
                "EA1*EJB_A1*261126*2305*0",
                "EA2*EJB_A1*2*7**0",
                "EA3*0********0*0",
            ])
        #expect(segments[pa4 + 6].hasPrefix("G85*"))
        #expect(!segments.contains { $0.contains("EOA2") })
        #expect(segments.contains("SE*19*0001"))
    }

    @Test func codesNameTheZoneOrTheSelection() {
        #expect(DEXAudit.EventCode.healthTimer(zone: nil) == "EJH")
        #expect(DEXAudit.EventCode.refrigeration(zone: 1) == "EJJ_1")
        #expect(DEXAudit.EventCode.temperatureSensor(zone: 1) == "EOA1")
        #expect(DEXAudit.EventCode.temperatureSensor(zone: nil) == "EOA")
        #expect(DEXAudit.EventCode.dispenseMotor(selection: "B3") == "EJB_B3")
    }

    @Test func datesAreYYMMDDAndTimesHHMMAcrossLeapDaysCenturiesAndBeforeTheEpoch() {
        #expect(DEXDate.fields(millisecondsSinceEpoch: 0, secondsEast: 0) == ("700101", "0000"))
        #expect(DEXDate.fields(millisecondsSinceEpoch: 951_868_799_999, secondsEast: 0) == ("000229", "2359"))
        #expect(DEXDate.fields(millisecondsSinceEpoch: 4_107_542_400_000, secondsEast: 0) == ("000301", "0000"), "2100 is no leap year")
        #expect(DEXDate.fields(millisecondsSinceEpoch: -1, secondsEast: 0) == ("691231", "2359"))
        #expect(DEXDate.fields(millisecondsSinceEpoch: 0, secondsEast: -5 * 3_600) == ("691231", "1900"))
    }
}
