import Foundation
import Testing

@testable import VendDEX

@Suite struct DEXWriterTests {
    static let audit = DEXAudit(
        communicationID: "VDD0000001", assetNumber: "VM-7", location: "Hall*2", decimalPlaces: 2, currencyCode: "EUR",
        selections: [.init(id: "A1", price: 150, vends: 1, value: 150), .init(id: "A2", price: 200, vends: 1, value: 200)],
        cash: .init(coinsIn: 400))

    @Test func writesTheEnvelopeAndSegmentsWithCRLF() {
        let file = DEXWriter.file(Self.audit)
        #expect(file.hasSuffix("\r\n"))
        let segments = file.components(separatedBy: "\r\n").dropLast()
        #expect(!segments.contains { $0.contains("\n") || $0.contains("\r") })
        #expect(
            Array(segments) == [
                "DXS*VDD0000001*VA*V0/6*1",
                "ST*001*0001",
                "ID1*VDD0000001*VENDD*1*Hall 2**VM-7",
                "ID4*2**EUR",
                "VA1*350*2*350*2",
                "VA3*0*0*0*0",
                "CA2*350*2*350*2",
                "CA3*400*400*0*0*400*400*0*0",
                "CA4*0*0*0*0",
                "CA10*0*0",
                "PA1*A1*150", "PA2*1*150*1*150", "PA4*0",
                "PA1*A2*200", "PA2*1*200*1*200", "PA4*0",
                "EA3*0********0*0",
                "G85*\(String(CRC16ARC.checksum(Array(segments[1...16].map { $0 + "\r\n" }.joined().utf8)), radix: 16, uppercase: true))",
                "SE*18*0001",
                "DXE*1*1",
            ])
    }

    @Test func theChecksumIsFourDigitsMostSignificantFirst() {
        let audit = DEXAudit(
            communicationID: "VDD0000001", assetNumber: "1", location: "", decimalPlaces: 0,
            currencyCode: "KRW", selections: [], cash: .init(coinsIn: 0))
        let file = DEXWriter.file(audit)
        let g85 = file.components(separatedBy: "\r\n").first { $0.hasPrefix("G85*") }
        let checked = file[file.range(of: "ST*")!.lowerBound..<file.range(of: "G85*")!.lowerBound]
        let expected = CRC16ARC.checksum(Array(checked.utf8))
        #expect(g85?.count == 8)
        #expect(UInt16(g85?.dropFirst(4) ?? "", radix: 16) == expected)
    }

    /// A changer machine: coins split between box and tubes, a bill, change and a payout test
    /// paid, float filled, tubes counted.
    @Test func cashSegmentsSplitTheCashByWhereItWent() {
        let cash = DEXAudit.Cash(
            coinsIn: 1_500, coinsToTubes: 1_000, billsIn: 1_000, dispensed: 800,
            manuallyDispensed: 300, filled: 5_000, tubeContents: 4_900)
        #expect(
            DEXWriter.cashSegments(cash, since: cash).map(DEXWriter.segment) == [
                "CA3*2500*500*1000*1000*2500*500*1000*1000\r\n",
                "CA4*800*300*800*300\r\n",
                "CA10*5000*5000\r\n",
                "CA15*4900\r\n",
            ])
    }

    /// After a DEX read the "since last reset" elements carry the interim figures, each in the
    /// place EVA-DTS 6.1.1 gives it (VA103/104, CA203/204, CA301–304, CA401/402, CA1001, PA203/204).
    @Test func theInterimFiguresGoWhereTheSpecificationPutsThem() {
        var audit = DEXAudit(
            communicationID: "VDD0000001", assetNumber: "VM-7", location: "", decimalPlaces: 2, currencyCode: "EUR",
            selections: [.init(id: "A1", price: 150, vends: 3, value: 450), .init(id: "A2", price: 200, vends: 1, value: 200)],
            cash: .init(coinsIn: 900, coinsToTubes: 300, billsIn: 500, dispensed: 250, manuallyDispensed: 50, filled: 1_000))
        audit.sinceReset = .init(
            selections: [.init(id: "A1", price: nil, vends: 1, value: 150)],
            cash: .init(coinsIn: 200, coinsToTubes: 100, billsIn: 0, dispensed: 50, manuallyDispensed: 0, filled: 0))
        let segments = DEXWriter.file(audit).components(separatedBy: "\r\n")
        #expect(segments.contains("VA1*650*4*150*1"))
        #expect(segments.contains("CA2*650*4*150*1"))
        #expect(segments.contains("CA3*200*100*100*0*1400*600*300*500"))
        #expect(segments.contains("CA4*50*0*250*50"))
        #expect(segments.contains("CA10*0*1000"))
        #expect(segments.contains("PA2*3*450*1*150"))
        #expect(segments.contains("PA2*1*200*0*0"))
    }

    /// A machine with price lists: each selection's sales per payment device and list follow its
    /// PA1, PA2 and PA4 (EVA-DTS 6.1.1 §2.2.2), whole life then since the last reset.
    @Test func priceListSalesFollowTheirSelection() {
        var audit = Self.audit
        audit.priceLists = [
            "A1": [
                .init(device: "CA", list: 1, price: 150, total: .init(vends: 2, value: 300), sinceReset: .init(vends: 1, value: 150)),
                .init(device: "DA", list: 2, price: 120, total: .init(vends: 1, value: 108), sinceReset: .init(vends: 0, value: 0)),
            ]
        ]
        let segments = DEXWriter.file(audit).components(separatedBy: "\r\n")
        let a1 = segments.firstIndex(of: "PA1*A1*150")!
        #expect(
            Array(segments[a1..<(a1 + 6)]) == [
                "PA1*A1*150", "PA2*1*150*1*150", "PA4*0", "PA7*A1*CA*1*150*2*300*1*150", "PA7*A1*DA*2*120*1*108*0*0", "PA1*A2*200",
            ])
        #expect(DEXAudit.ListSales.device(of: "cashless2") == "DB" && DEXAudit.ListSales.device(of: "free-cashless1") == nil)
    }

    /// Card sales are paid vends (VA1) but not cash (CA2): each reader has its DA2/DB2, whole life
    /// then since the last reset, and a reader that never sold has none.
    @Test func cardSalesHaveTheirOwnSegments() {
        var audit = DEXAudit(
            communicationID: "VDD0000001", assetNumber: "VM-7", location: "", decimalPlaces: 2, currencyCode: "EUR",
            selections: [.init(id: "A1", price: 150, vends: 3, value: 450), .init(id: "A2", price: 200, vends: 2, value: 400)],
            cash: .init(coinsIn: 350))
        audit.byPayment = ["cash": .init(vends: 2, value: 350), "cashless1": .init(vends: 3, value: 500)]
        audit.sinceReset = .init(
            selections: [.init(id: "A2", price: nil, vends: 1, value: 200)], cash: .init(coinsIn: 0),
            byPayment: ["cash": .init(vends: 0, value: 0), "cashless1": .init(vends: 1, value: 200)])
        let segments = DEXWriter.file(audit).components(separatedBy: "\r\n")
        #expect(segments.contains("VA1*850*5*200*1"))
        #expect(segments.contains("CA2*350*2*0*0"))
        #expect(segments.contains("DA2*500*3*200*1"))
        #expect(!segments.contains { $0.hasPrefix("DB2") })
        let order = ["CA2", "CA3", "DA2", "PA1"].map { tag in segments.firstIndex { $0.hasPrefix(tag + "*") } ?? -1 }
        #expect(order == order.sorted() && !order.contains(-1), "EVA-DTS block order: CA, DA, then PA")
    }

    @Test func aSelectionWithoutPriceOmitsIt() {
        #expect(DEXWriter.segment(["PA1", "C9"]) == "PA1*C9\r\n")
        #expect(DEXWriter.segment(["ID1", "X", "", "", ""]) == "ID1*X\r\n")
    }

    @Test func onlyPrintableASCIIWithoutTheSeparatorSurvives() {
        #expect(DEXWriter.clean("2층*B\t~") == "2  B ~")
    }

    @Test func communicationIDsAreThreeCapitalsAndSevenDigits() {
        #expect(DEXAudit.isValidCommunicationID("VDD0000001"))
        #expect(!DEXAudit.isValidCommunicationID("vdd0000001"))
        #expect(!DEXAudit.isValidCommunicationID("VDD000001"))
        #expect(!DEXAudit.isValidCommunicationID("VD10000001"))
    }
}
