import CcTalk
import Testing

@Suite struct FrameReceiverTests {
    let ack: [UInt8] = [1, 0, 2, 0, 253]
    let ms: UInt64 = 1_000_000

    @Test func aReplyInPiecesIsAssembled() {
        var receiver = FrameReceiver(checksum: .simple8, destination: 1)
        #expect(receiver.receive(ack.prefix(2), at: 0).isEmpty)
        #expect(receiver.receive(ack.suffix(3), at: 10 * ms) == [Frame(destination: 1, source: 2, header: 0)])
    }

    @Test func aGapOfMoreThan50msDropsThePartialPacket() {
        var receiver = FrameReceiver(checksum: .simple8, destination: 1)
        _ = receiver.receive(ack.prefix(3), at: 0)
        // 51 ms later: the fragment is garbage; a whole new reply is read cleanly.
        #expect(receiver.receive(ack, at: 51 * ms) == [Frame(destination: 1, source: 2, header: 0)])
        #expect(receiver.takeDiscarded() == 3)
    }

    @Test func withinTheGapAFragmentDoesNotSwallowTheReply() {
        // The fragment's length byte claims 16 bytes; the complete reply behind it still wins.
        var receiver = FrameReceiver(checksum: .simple8, destination: 1)
        _ = receiver.receive([1, 11, 2], at: 0)
        #expect(receiver.receive(ack, at: 10 * ms) == [Frame(destination: 1, source: 2, header: 0)])
        #expect(receiver.takeDiscarded() == 3)
        #expect(receiver.isIdle)
    }

    @Test func garbageBeforeAReplyIsSkipped() {
        var receiver = FrameReceiver(checksum: .simple8, destination: 1)
        let frames = receiver.receive([0x55, 0xAA, 0x00, 0x07] + ack, at: 0)
        #expect(frames == [Frame(destination: 1, source: 2, header: 0)])
        #expect(receiver.takeDiscarded() == 4)
    }

    @Test func aCorruptReplyIsNotDelivered() {
        var receiver = FrameReceiver(checksum: .simple8, destination: 1)
        #expect(receiver.receive([1, 0, 2, 0, 254], at: 0).isEmpty)
    }

    @Test func ourOwnEchoIsNotTakenForAReply() {
        var receiver = FrameReceiver(checksum: .simple8, destination: 1)
        let poll: [UInt8] = [2, 0, 1, 229, 24]
        #expect(receiver.receive(poll + ack, at: 0) == [Frame(destination: 1, source: 2, header: 0)])
    }
}

/// Part 2 §3.27: "event counter minus last event counter".
@Suite struct EventCounterTests {
    @Test(arguments: [(UInt8(23), UInt8(23), 0), (104, 102, 2), (1, 255, 1), (3, 253, 5), (54, 48, 6), (5, 0, 5)])
    func newEventsMatchTheSpecExamples(current: UInt8, last: UInt8, expected: Int) {
        #expect(EventCursor.newEvents(from: last, to: current) == expected)
    }

    @Test func theSequenceFollowsTheCounterAcrossTheWrap() {
        var cursor = EventCursor(sequence: 253)
        #expect(cursor.counter == 253)
        #expect(cursor.advance(to: 2) == .events(count: 4, newest: 257, lost: 0))
        #expect(cursor.counter == 2)
        // The sequence stays ≡ counter (mod 255), so it alone restores the counter.
        #expect(EventCursor(sequence: 257).counter == 2)
        #expect(EventCursor(sequence: 255).counter == 255)
        #expect(EventCursor(sequence: 0).counter == 0)
    }

    @Test func moreThanFiveNewEventsLoseTheOldest() {
        var cursor = EventCursor(sequence: 48)
        #expect(cursor.advance(to: 54) == .events(count: 6, newest: 54, lost: 1))
    }

    @Test func aDropToZeroIsAResetAndStartsANewLap() {
        var cursor = EventCursor(sequence: 300)  // counter 45 in lap 1
        #expect(cursor.advance(to: 0) == .reset(lapStart: 510))
        #expect(cursor.counter == 0)
        #expect(cursor.advance(to: 0) == .none)
        #expect(cursor.advance(to: 1) == .events(count: 1, newest: 511, lost: 0))
        #expect(EventCursor(sequence: 511).counter == 1)
    }

    @Test func aResetRightAfterCounter255KeepsTheSequence() {
        var cursor = EventCursor(sequence: 255)
        #expect(cursor.advance(to: 0) == .reset(lapStart: 255))
        #expect(cursor.advance(to: 0) == .none)
        #expect(cursor.advance(to: 3) == .events(count: 3, newest: 258, lost: 0))
    }

    @Test func noChangeIsNoEvent() {
        var cursor = EventCursor(sequence: 0)
        #expect(cursor.advance(to: 0) == .none)
        #expect(cursor.advance(to: 1) == .events(count: 1, newest: 1, lost: 0))
    }

    @Test func codesHaveNames() {
        #expect(AcceptorEventCode.name(1) == "reject coin")
        #expect(AcceptorEventCode.name(254) == "coin return mechanism activated (flight deck open)")
        #expect(AcceptorEventCode.name(130) == "inhibited coin (type 3)")
        #expect(AcceptorEventCode.rejected(14) == .yes)
        #expect(FaultCode.name(3) == "fault on credit sensor")
        #expect(FaultCode.name(200) == "unknown fault code 200")
    }
}
