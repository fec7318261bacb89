import Testing

@testable import VendDEX

/// Checks written from EVA-DTS 6.1.1's words (page numbers are the PDF's), not from what vendd
/// did: the records a configured device must send, EA3, SD1 as a handheld sends it.
@Suite struct DEXConformanceTests {
    static func audit() -> DEXAudit {
        DEXAudit(
            communicationID: "VDD0000001", assetNumber: "VM-7", location: "", decimalPlaces: 2, currencyCode: "EUR",
            selections: [.init(id: "A1", price: 150, vends: 0, value: 0)], cash: .init(coinsIn: 0))
    }

    static func segments(_ audit: DEXAudit) -> [String] { DEXWriter.file(audit).components(separatedBy: "\r\n") }

    /// DA201/DA202 are "CM" (p.33), "CM = Conditional Mandatory (required if the device or
    /// feature is present in vending system)" (p.41): a reader configured and never used still
    /// sends DA2, with zeros; DB2 likewise; a reader not configured sends none.
    @Test func aConfiguredReaderSendsItsRecordWithZeros() {
        var audit = Self.audit()
        audit.devices = [.cashless1]
        let segments = Self.segments(audit)
        #expect(segments.contains("DA2*0*0*0*0"))
        #expect(!segments.contains { $0.hasPrefix("DB2") })
        audit.devices = [.cashless1, .cashless2]
        #expect(Self.segments(audit).contains("DB2*0*0*0*0"))
        // With the split known and only cash sold, the configured reader still has its zeros.
        audit.byPayment = ["cash": .init(vends: 0, value: 0)]
        #expect(Self.segments(audit).contains("DA2*0*0*0*0"))
    }

    /// CA310 "VALUE OF BILLS IN SINCE INITIALIZATION" is CM (p.31), and note 6 (p.41): "new
    /// designs need only send CA309 and CA310": a machine with a bill validator sends them.
    @Test func aBillValidatorAddsCA309AndCA310() {
        var audit = Self.audit()
        audit = DEXAudit(
            communicationID: "VDD0000001", assetNumber: "VM-7", location: "", decimalPlaces: 2, currencyCode: "EUR",
            selections: [], cash: .init(coinsIn: 300, billsIn: 1_000))
        #expect(Self.segments(audit).contains("CA3*1300*300*0*1000*1300*300*0*1000"))
        audit.devices = [.billValidator]
        #expect(Self.segments(audit).contains("CA3*1300*300*0*1000*1300*300*0*1000*1000*1000"))
    }

    /// EA309 "NUMBER OF READS WITH OR WITHOUT RESET SINCE INITIALIZATION" and EA310 "NUMBER OF
    /// RESETS SINCE INITIALIZATION" are M (p.39), "M = Mandatory (must be transferred)" (p.41);
    /// EA302/EA303 "Date/Time of this interrogation", EA304 "The Terminals identification data",
    /// EA305/EA306 "of the previous interrogation", EA307 the previous terminal, AN 01–12
    /// (p.231–232); dates DT YYMMDD, times TM HHMM (§2.3.2.1).
    @Test func EA3CarriesTheReadsAndTheirDates() throws {
        var audit = Self.audit()
        audit.reads.reads = 24
        audit.reads.readsWithReset = 9
        audit.reads.resets = 10
        // 2026-11-27 09:30 UTC, at UTC+1; the last read 2026-11-20 14:05 UTC.
        audit.reads.now = 1_795_771_800_000
        audit.reads.nowSecondsEast = 3_600
        audit.reads.terminal = "HHD0000001"
        audit.reads.last = .init(at: 1_795_183_500_000, secondsEast: 3_600, terminal: "DDCMP master of route 7")
        let segments = Self.segments(audit)
        #expect(segments.contains("EA3*9*261127*1030*HHD0000001*261120*1505*DDCMP master**24*10"))
        let ea3 = try #require(segments.firstIndex { $0.hasPrefix("EA3*") })
        #expect(segments[ea3 + 1].hasPrefix("G85*"), "EA3 last before G85, as p.27's example")
    }

    /// SD1 (p.40, p.258): SD101 current password, SD102 new password, SD105/SD106 "AUTO, SAVE,
    /// and RESET are the allowable commands"; the pass code in §6.1.6's form, "X" and the 4
    /// bytes in hex, "MS Byte first" (p.178–179): `SD1*X01020304*XAA00EF21`.
    @Test func SD1IsReadAsTheDictionaryDefinesIt() {
        let text = "DXS*HHD0000001*VA*V0/6*1\r\nST*001*0001\r\nSD1*X01020304*XAA00EF21***RESET*SAVE\r\nSE*3*0001\r\nDXE*1*1\r\n"
        let configuration = DEXConfiguration(text: Array(text.utf8))
        #expect(configuration.currentPassword == [0x01, 0x02, 0x03, 0x04])
        #expect(configuration.newPassword == [0xAA, 0x00, 0xEF, 0x21])
        #expect(configuration.intervalReset == .reset && configuration.eventReset == .save)
        #expect(configuration.refused.isEmpty && !configuration.ignored.contains("SD1"))
        let save = DEXConfiguration(text: Array("SD1*****SAVE\r\n".utf8))
        #expect(save.intervalReset == .save && save.currentPassword == nil && save.eventReset == nil)
        let wrong = DEXConfiguration(text: Array("SD1*1234****MAYBE\r\n".utf8))
        #expect(wrong.intervalReset == nil && wrong.refused.count == 2)
        #expect(DEXConfiguration.passCode("X0102030") == nil && DEXConfiguration.passCode("x01020304") == nil)
    }
}
