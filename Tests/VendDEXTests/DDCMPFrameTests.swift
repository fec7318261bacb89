import Testing

@testable import VendDEX

/// The DDCMP codec and frame receiver against byte strings written from EVA-DTS 6.1.1 chapter 3
/// and a master implementation's traces (research notes §4.6).
@Suite struct DDCMPFrameTests {
    @Test func controlMessagesAreTheSpecificationsBytes() {
        // START at 2400 baud to the point-to-point address, and an ACK of message 1 (§3.6.2).
        #expect(DDCMPControl(.start, address: 0x01).bytes == [0x05, 0x06, 0x40, 0x00, 0x00, 0x01, 0x5C, 0x55])
        #expect(DDCMPControl(.ack, number: 1, address: 0x01).bytes == [0x05, 0x01, 0x40, 0x01, 0x00, 0x01, 0xB8, 0x55])
        // A NACK carries its reason in the low six bits of byte 3.
        #expect(DDCMPControl(.nack, number: 3, reason: .dataCRC, address: 0x01).header == [0x05, 0x02, 0x42, 0x03, 0x00, 0x01])
    }

    @Test func dataMessagesAreTheSpecificationsBytes() {
        // A Read Data of the audit collection list behind its header (research notes §4.6).
        let read: [UInt8] = [0x77, 0xE2, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00]
        let frame = DDCMPFrame.data(read, received: 1, number: 2, address: 1)
        #expect(Array(frame.bytes.prefix(8)) == [0x81, 0x09, 0x40, 0x01, 0x02, 0x01, 0x46, 0xB0])
        #expect(Array(frame.bytes.dropFirst(8)) == read + [0xF0, 0x72])
        // §6.2.1: "a Finish command with header would be sent as follows".
        #expect(
            DDCMPFrame.data([0x77, 0xFF], received: 5, number: 3, address: 1).bytes
                == [0x81, 0x02, 0x40, 0x05, 0x03, 0x01, 0xA3, 0x20, 0x77, 0xFF, 0x67, 0xB0])
    }

    @Test func theLengthHasFourteenBitsAndTheSelectFlagMarksTheLastBlock() {
        let header = DDCMPDataHeader(length: 0x1234, isLast: true, received: 7, number: 8, address: 1)
        #expect(header.header == [0x81, 0x34, 0xD2, 0x07, 0x08, 0x01])
        #expect(DDCMPDataHeader(header: header.header[...]) == header)
    }

    @Test func aMessageIsReadHoweverTheReadsCutIt() {
        let bytes = DDCMPControl(.start, address: 1).bytes + DDCMPFrame.data([0x77, 0xFF], received: 0, number: 1, address: 1).bytes
        var whole = DDCMPFrameReceiver(), byteByByte = DDCMPFrameReceiver()
        let tokens = whole.receive(bytes)
        #expect(tokens == [.frame(.control(DDCMPControl(.start, address: 1))), .frame(.data([0x77, 0xFF], received: 0, number: 1, address: 1))])
        #expect(bytes.flatMap { byteByByte.receive([$0]) } == tokens)
    }

    @Test func garbageIsSkippedAndAMessageInsideABadHeaderIsFound() {
        var receiver = DDCMPFrameReceiver()
        // Noise, then an 05 that starts no message, then a START: the bad header is dropped one
        // byte at a time until the START's own 05 lines up.
        let tokens = receiver.receive([0xFF, 0x00, 0x05, 0x99] + DDCMPControl(.start, address: 1).bytes)
        #expect(tokens.first == .noise(0xFF) && tokens[1] == .noise(0x00))
        #expect(tokens.contains(.badHeader))
        #expect(tokens.last == .frame(.control(DDCMPControl(.start, address: 1))))
        #expect(!receiver.isInsideMessage)
    }

    @Test func aWrongDataCRCIsBadDataWithItsHeader() {
        var bytes = DDCMPFrame.data([0x77, 0xFF], received: 0, number: 1, address: 1).bytes
        bytes[bytes.count - 1] ^= 0x01
        var receiver = DDCMPFrameReceiver()
        guard case .badData(let header, let reason) = receiver.receive(bytes).first else {
            Issue.record("a corrupt data message was not reported")
            return
        }
        #expect(header.number == 1 && reason.contains("data CRC"))
    }

    @Test func aMessageCutShortIsCorruptDataWhenTheTimerFires() {
        var receiver = DDCMPFrameReceiver()
        let bytes = DDCMPFrame.data(Array(repeating: 0x41, count: 20), received: 0, number: 1, address: 1).bytes
        #expect(receiver.receive(Array(bytes.prefix(15))).isEmpty)
        #expect(receiver.isInsideMessage)
        guard case .badData(let header, _) = receiver.abandonMessage() else {
            Issue.record("a message cut short was not reported")
            return
        }
        #expect(header.length == 20 && !receiver.isInsideMessage)
        // Half a header is only dropped.
        #expect(receiver.receive([0x81, 0x02]).isEmpty && receiver.abandonMessage() == nil)
    }

    @Test func aMessageLongerThanTheBufferIsRefused() {
        var receiver = DDCMPFrameReceiver(maximumLength: 16)
        let tokens = receiver.receive(DDCMPFrame.data(Array(repeating: 0x41, count: 17), received: 0, number: 1, address: 1).bytes)
        #expect(tokens.first == .tooLong(DDCMPDataHeader(length: 17, isLast: false, received: 0, number: 1, address: 1)))
        #expect(!tokens.contains { if case .frame = $0 { true } else { false } })
    }

    @Test func commandsAreReadWithTheirFields() {
        let way: [UInt8] = [0x77, 0xE0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x26, 0x11, 0x26, 0x17, 0x30, 0x00, 0x41, 0x42, 0x0C]
        guard case .whoAreYou(let handheld) = DDCMPCommand(way) else {
            Issue.record("Who Are You not read")
            return
        }
        #expect(handheld.userID == "AB" && handheld.description == "route person 'AB'")
        #expect(DDCMPCommand([0x77, 0xE2, 0x00, 0x02, 0x01, 0x10, 0x00, 0x20, 0x01]) == .readData(list: 2, record: 1, offset: 16, length: 288))
        #expect(DDCMPCommand([0x77, 0xFF]) == .finish)
        #expect(DDCMPCommand([0x77, 0xE3, 0x00, 0x01, 0x00, 0x00]) == .other(code: 0xE3))
        #expect(DDCMPCommand([0x77, 0xE0, 0x00]) == nil, "a Who Are You cut short")
        #expect(DDCMPCommand([0x99, 0x00, 0x41]) == nil)
    }
}
