import CcTalk
import Testing

/// Inputs on which Tests/Fuzz/fuzz-cctalk crashed, each kept with the fix (docs/fuzzing.md).
@Suite struct CcTalkFuzzRegressionTests {
    /// Script `03 01 | 00 05 | 01 00 30 00 37`: a CRC-16 ACK, whose empty data went through the
    /// inhibit-mask decoder, which trapped on the range 1...0.
    @Test func anEmptyInhibitMaskEnablesNothing() {
        var receiver = FrameReceiver(checksum: .crc16, destination: 1)
        let frames = receiver.receive([0x01, 0x00, 0x30, 0x00, 0x37], at: 0)
        #expect(frames == [Frame(destination: 1, source: nil, header: 0)])
        #expect(Payload.enabledPositions(frames[0].data) == [])
        #expect(Payload.enabledPositions([0b0000_0101]) == [1, 3])
        #expect(Payload.enabledPositions([0, 0b1000_0000]) == [16])
        #expect(Payload.enabledPositions(Payload.inhibitMask(enabled: [2, 9, 16])) == [2, 9, 16])
    }
}
