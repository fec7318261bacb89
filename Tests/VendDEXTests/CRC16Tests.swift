import Testing

@testable import VendDEX

@Suite struct CRC16Tests {
    @Test func matchesTheCatalogueCheckValueOfCRC16ARC() {
        #expect(CRC16ARC.checksum(Array("123456789".utf8)) == 0xBB3D)
    }

    @Test func emptyInputIsTheInitialValue() {
        #expect(CRC16ARC.checksum([UInt8]()) == 0)
    }

    /// The minimal audit in the research notes (§6.2) carries G85*13F8 over ST…EA3.
    @Test func matchesTheResearchNotesExampleFile() {
        let checked = [
            "ST*001*0001", "ID1*SNK0000001*SWIFTVMC*1***VM-0001", "ID4*2*978*EUR", "VA1*350*2*350*2",
            "VA3*0*0*0*0", "CA2*350*2*350*2", "PA1*1*150", "PA2*1*150*1*150", "PA4*0", "PA1*2*200",
            "PA2*1*200*1*200", "PA4*0", "EA3*1*20240101*1200******1*1",
        ]
        .map { $0 + "\r\n" }.joined()
        #expect(CRC16ARC.checksum(Array(checked.utf8)) == 0x13F8)
    }
}
