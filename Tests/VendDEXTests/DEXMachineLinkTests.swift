import Testing

@testable import VendDEX

/// The machine's side of DEX/UCS on manual time: bytes in at a given millisecond, bytes out
/// when they are due. The expected bytes are written from EVA-DTS 6.1.1 §4.4–4.5.
@Suite struct DEXMachineLinkTests {
    static let ack0: [UInt8] = [0x10, 0x30], ack1: [UInt8] = [0x10, 0x31], wack: [UInt8] = [0x10, 0x3B]
    static let enq: [UInt8] = [0x05], eot: [UInt8] = [0x04], nak: [UInt8] = [0x15]

    /// The link and its clock; `events` collects everything it reported.
    struct Wire {
        var link: DEXMachineLink
        var now: Int64 = 0
        var events: [DEXLinkEvent] = []
        var audit: [UInt8]? = Array("DXS*VDD0000001*VA*V0/6*1\r\nDXE*1*1\r\n".utf8)

        init(side: DEXFirstHandshakeSide = .handheld) {
            link = DEXMachineLink(communicationID: "VDD0000001", firstHandshakeSide: side, now: 0)
        }

        mutating func take(_ new: [DEXLinkEvent]) {
            for event in new {
                if case .handshake = event, let audit { link.supplyAudit(audit) }
            }
            events += new
        }

        mutating func hand(_ bytes: [UInt8]) { take(link.receive(bytes, at: now)) }

        /// Lets time run to the next thing the link does; returns what it sent then, and when.
        mutating func next(limit: Int64 = 120_000) -> (at: Int64, bytes: [UInt8])? {
            while let deadline = link.nextDeadline, deadline <= limit {
                now = max(now, deadline)
                take(link.advance(to: now))
                let bytes = link.takeOutput(at: now)
                if !bytes.isEmpty { return (now, bytes) }
            }
            return nil
        }

        mutating func expect(_ bytes: [UInt8], after delay: Int64, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
            let start = now
            let sent = next()
            #expect(sent?.bytes == bytes, comment, sourceLocation: sourceLocation)
            #expect(sent.map { $0.at - start } == delay, "sent after \(sent.map { $0.at - start } ?? -1) ms", sourceLocation: sourceLocation)
        }

        var failure: String? {
            events.compactMap { if case .failed(let stage, let reason) = $0 { "\(stage): \(reason)" } else { nil } }.first
        }
    }

    static func handshake(_ text: String) -> [UInt8] { DEXBlock(kind: .handshake, payload: Array(text.utf8), isLast: true).bytes }

    /// The research notes' vectors, computed by hand with CRC-16 x¹⁶+x¹⁵+x²+1 over the text and ETX.
    @Test func handshakeCRCsMatchTheWorkedVectors() {
        #expect(Self.handshake("XYZ1234567RR00L06").suffix(2) == [0x7B, 0x06])
        #expect(DEXBlock(kind: .handshake, payload: Array("00QRS7654321R00L06".utf8), isLast: true).crc == 0x1153)
        #expect(Self.handshake("XYZ1234567RR00L06").prefix(2) == [0x10, 0x01])
    }

    /// The handheld makes the first handshake (R), the machine answers with the second and
    /// sends its audit; every reply comes after the 10 ms turnaround, every session the machine
    /// starts after a 100 ms pause.
    @Test func aHandheldReadsTheAudit() throws {
        var wire = Wire()
        wire.hand(Self.enq)
        wire.expect(Self.ack0, after: 10)
        wire.hand(Self.handshake("HHD0000001RR01L01"))
        wire.expect(Self.ack1, after: 10)
        #expect(wire.events.first == .handshake(DEXFirstHandshake(payload: Array("HHD0000001RR01L01".utf8))!, machineFirst: false))
        wire.hand(Self.eot)
        wire.expect(Self.enq, after: 100, "the second handshake starts after ≥ 100 ms")
        wire.hand(Self.ack0)
        wire.expect(Self.handshake("00VDD0000001R00L06"), after: 10)
        wire.hand(Self.ack1)
        wire.expect(Self.eot, after: 10)
        wire.expect(Self.enq, after: 100, "the data transfer starts after ≥ 100 ms")
        wire.hand(Self.ack0)
        let audit = try #require(wire.audit)
        wire.expect(DEXBlock(kind: .data, payload: audit, isLast: true).bytes, after: 10)
        #expect(!wire.events.contains { if case .auditDelivered = $0 { true } else { false } })
        wire.hand(Self.ack1)
        #expect(wire.events.last == .auditDelivered(text: audit), "delivered on the last block's acknowledgement")
        wire.expect(Self.eot, after: 10)
        #expect(wire.link.isIdle)
    }

    /// "Before initiating the second or third session, the initiating device should pause a
    /// minimum of 100 milliseconds" (p.114): counted from when the session's EOT really went
    /// out, which may be later than it was due.
    @Test func thePauseRunsFromTheEOTOnTheWire() {
        var wire = Wire()
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(Self.handshake("HHD0000001RR01L01"))
        _ = wire.next()
        wire.hand(Self.eot)
        _ = wire.next()
        wire.hand(Self.ack0)
        _ = wire.next()
        wire.hand(Self.ack1)
        let eot = wire.next()
        #expect(eot?.bytes == Self.eot)
        // The port wrote the EOT 3 ms after it was due.
        let written = (eot?.at ?? 0) + 3
        wire.link.wrote(at: written)
        let enq = wire.next()
        #expect(enq?.bytes == Self.enq)
        #expect((enq?.at ?? 0) - written >= 100, "ENQ \((enq?.at ?? 0) - written) ms after the EOT went out")
    }

    /// Blocks alternate ACK1, ACK0, ACK1; the wrong one is no acknowledgement.
    @Test func aLongAuditGoesInBlocksAcknowledgedAlternately() {
        var wire = Wire()
        let audit = Array(String(repeating: "PA1*A1*150\r\n", count: 50).utf8)
        wire.audit = audit
        let blocks = DEXBlock.dataBlocks(audit)
        #expect(blocks.count == 3 && blocks.allSatisfy { $0.payload.count <= 243 } && blocks.map(\.isLast) == [false, false, true])
        toData(&wire)
        wire.expect(blocks[0].bytes, after: 10)
        wire.hand(Self.ack1)
        wire.expect(blocks[1].bytes, after: 10)
        wire.hand(Self.ack1)
        wire.expect(blocks[1].bytes, after: 10, "ACK1 again acknowledges block 1, not 2: block 2 goes again")
        wire.hand(Self.ack0)
        wire.expect(blocks[2].bytes, after: 10)
        wire.hand(Self.ack1)
        #expect(wire.events.last == .auditDelivered(text: audit))
        #expect(wire.events.reduce(into: "") { if case .warning(let text) = $1 { $0 += text } }.contains("the other ACK"))
    }

    /// A NAKed block goes again; after three tries the session ends with EOT, no delivery.
    @Test func naksRetransmitThenGiveUp() {
        var wire = Wire()
        toData(&wire)
        let block = DEXBlock(kind: .data, payload: wire.audit!, isLast: true).bytes
        wire.expect(block, after: 10)
        wire.hand(Self.nak)
        wire.expect(block, after: 10)
        wire.hand(Self.nak)
        wire.expect(block, after: 10)
        wire.hand(Self.nak)
        wire.expect(Self.eot, after: 10)
        #expect(wire.failure == "data transfer: NAK for block 1 of 1 after 3 tries")
        #expect(!wire.events.contains { if case .auditDelivered = $0 { true } else { false } })
        #expect(wire.link.isIdle)
    }

    /// Timer A: no answer within 1 s, the machine asks again with ENQ; a receiver that did get
    /// the block repeats its ACK and the transfer goes on.
    @Test func silenceAfterABlockIsAskedAboutWithENQ() {
        var wire = Wire()
        toData(&wire)
        let block = DEXBlock(kind: .data, payload: wire.audit!, isLast: true).bytes
        wire.expect(block, after: 10)
        wire.expect(Self.enq, after: 1_000, "Timer A (1 s) from the block going out")
        wire.hand(Self.ack1)
        #expect(wire.events.last == .auditDelivered(text: wire.audit!))
    }

    /// WACK: the receiver is busy; the sender waits (100–500 ms) and asks with ENQ.
    @Test func aWACKIsWaitedOut() {
        var wire = Wire()
        toData(&wire)
        wire.expect(DEXBlock(kind: .data, payload: wire.audit!, isLast: true).bytes, after: 10)
        wire.hand(Self.wack)
        wire.expect(Self.enq, after: 300)
        wire.hand(Self.ack1)
        #expect(wire.events.last == .auditDelivered(text: wire.audit!))
    }

    /// A wrong CRC, garbled bytes or a block cut short (Timer B, 100 ms between characters) is
    /// NAKed; the good block after it is taken.
    @Test func badHandshakesAreNAKedAndTheGoodOneTaken() {
        var wire = Wire()
        wire.hand([0xFF, 0x42, 0x10, 0x7A] + Self.enq)
        wire.expect(Self.ack0, after: 10, "noise before the ENQ is ignored")
        var corrupt = Self.handshake("HHD0000001RR00L06")
        corrupt[corrupt.count - 1] ^= 0xFF
        wire.hand(corrupt)
        wire.expect(Self.nak, after: 10)
        wire.hand(Array(Self.handshake("HHD0000001RR00L06").prefix(8)))
        wire.now += 50
        wire.expect(Self.nak, after: 60, "Timer B: 100 ms after the last character")
        wire.hand([0x10, 0x01, 0x41, 0x10, 0x7F])
        wire.expect(Self.nak, after: 10, "DLE and a byte that ends nothing")
        wire.hand(Self.handshake("HHD0000001"))
        wire.expect(Self.nak, after: 10, "a first handshake of 10 bytes")
        wire.hand(Self.handshake("HHD0000001RR00L06"))
        wire.expect(Self.ack1, after: 10)
        #expect(wire.events.filter { if case .warning = $0 { true } else { false } }.count == 4)
    }

    /// Timer D: 2 s without a character inside a session ends it, detected with the margin of
    /// p.115: "it is recommended that devices wait at least 2.1 to 2.2 seconds before detecting
    /// a Timer D timeout situation".
    @Test func silenceInsideAHandshakeEndsTheSession() {
        var wire = Wire()
        wire.hand(Self.enq)
        wire.expect(Self.ack0, after: 10)
        // The ENQ came at 0: the EOT goes the turnaround after the timeout is detected.
        wire.expect(Self.eot, after: 2_150)
        #expect((2_100...2_200).contains(wire.now - 10), "Timer D detected after \(wire.now - 10) ms of silence")
        #expect(wire.failure == "first handshake: the handheld fell silent for 2150 ms (Timer D)")
        #expect(wire.link.isIdle)
    }

    /// A handheld that keeps a session open with noise is cut after the overall 60 s.
    @Test func theOverallBoundEndsASessionThatNeverFinishes() {
        var wire = Wire()
        wire.hand(Self.enq)
        wire.expect(Self.ack0, after: 10)
        while wire.now < 59_000 {
            wire.now += 1_000
            wire.hand([0x7A])
        }
        _ = wire.next()
        #expect(wire.failure == "first handshake: the session took longer than 60 s")
    }

    /// An unknown revision, a communication ID that is not one, an operation vendd does not
    /// offer, and no audit to send each get their response code.
    @Test(arguments: [
        ("HHD0000001RV1.0.0", "02"), ("HHD-000001RR00L06", "01"), ("HHD0000001MR00L06", "05"),
    ])
    func theSecondHandshakeAnswersWhatIsWrong(first: String, code: String) {
        var wire = Wire()
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(Self.handshake(first))
        _ = wire.next()
        wire.hand(Self.eot)
        _ = wire.next()
        wire.hand(Self.ack0)
        #expect(wire.next()?.bytes == Self.handshake("\(code)VDD0000001R00L06"))
        wire.hand(Self.ack1)
        #expect(wire.next()?.bytes == Self.eot)
        #expect(wire.failure?.hasPrefix("second handshake: answered \(code)") == true)
        #expect(wire.link.isIdle)
    }

    @Test func aReadWithNoAuditIsAnswered04() {
        var wire = Wire()
        wire.audit = nil
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(Self.handshake("HHD0000001RR00L06"))
        _ = wire.next()
        wire.hand(Self.eot)
        _ = wire.next()
        wire.hand(Self.ack0)
        #expect(wire.next()?.bytes == Self.handshake("04VDD0000001R00L06"))
    }

    /// Operation S: after the second handshake the handheld sends, the machine acknowledges
    /// ACK1, ACK0 … and reports the text once the handheld's EOT ends the session.
    @Test func aHandheldSendsAConfiguration() {
        var wire = Wire()
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(Self.handshake("HHD0000001SR00L06"))
        _ = wire.next()
        wire.hand(Self.eot)
        #expect(wire.next()?.bytes == Self.enq)
        wire.hand(Self.ack0)
        #expect(wire.next()?.bytes == Self.handshake("00VDD0000001R00L06"))
        wire.hand(Self.ack1)
        #expect(wire.next()?.bytes == Self.eot)
        wire.now += 150
        wire.hand(Self.enq)
        wire.expect(Self.ack0, after: 10)
        wire.hand(DEXBlock(kind: .data, payload: Array("PC1*A1*".utf8), isLast: false).bytes)
        wire.expect(Self.ack1, after: 10)
        wire.hand(Self.enq)
        wire.expect(Self.ack1, after: 10, "an ENQ is answered with the last answer again")
        wire.hand(DEXBlock(kind: .data, payload: Array("175\r\n".utf8), isLast: true).bytes)
        wire.expect(Self.ack0, after: 10)
        #expect(!wire.events.contains { if case .configurationReceived = $0 { true } else { false } }, "not before EOT")
        wire.hand(Self.eot)
        #expect(wire.events.last == .configurationReceived(text: Array("PC1*A1*175\r\n".utf8)))
    }

    /// Between sessions the handheld may take its time (nodestark's reader waits up to 3 s):
    /// Timer D starts with its ENQ, and noise before it extends nothing.
    @Test func aHandheldMayTakeSecondsToStartItsTransfer() {
        var wire = Wire()
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(Self.handshake("HHD0000001SR00L06"))
        _ = wire.next()
        wire.hand(Self.eot)
        _ = wire.next()
        wire.hand(Self.ack0)
        _ = wire.next()
        wire.hand(Self.ack1)
        #expect(wire.next()?.bytes == Self.eot)
        wire.now += 1_500
        wire.hand([0x7A])
        wire.now += 1_500
        wire.hand(Self.enq)
        wire.expect(Self.ack0, after: 10)
        #expect(wire.failure == nil)
        wire.expect(Self.eot, after: 2_150, "Timer D from the ENQ on, detected at 2.15 s (p.115)")
        #expect(wire.failure == "data transfer: the handheld fell silent for 2150 ms (Timer D)")
    }

    /// An EOT before the last block is an abandoned transfer: nothing is reported received.
    @Test func aConfigurationCutShortIsNotApplied() {
        var wire = Wire()
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(Self.handshake("HHD0000001SR00L06"))
        _ = wire.next()
        wire.hand(Self.eot)
        _ = wire.next()
        wire.hand(Self.ack0)
        _ = wire.next()
        wire.hand(Self.ack1)
        _ = wire.next()
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(DEXBlock(kind: .data, payload: Array("PC1*A1*175\r\n".utf8), isLast: false).bytes)
        _ = wire.next()
        wire.hand(Self.eot)
        #expect(wire.failure == "data transfer: the handheld ended the session (EOT) before its last block")
        #expect(!wire.events.contains { if case .configurationReceived = $0 { true } else { false } })
    }

    /// The machine makes the first handshake (S) when configured to, and the handheld answers
    /// with the second; then the machine sends its audit.
    @Test func theMachineCanMakeTheFirstHandshake() throws {
        var wire = Wire(side: .machine)
        wire.expect(Self.enq, after: 2_000, "the first bid")
        wire.expect(Self.enq, after: 1_000, "nobody there: asked again after Timer A")
        wire.hand(Self.ack0)
        wire.expect(Self.handshake("VDD0000001SR00L06"), after: 10)
        wire.hand(Self.ack1)
        wire.expect(Self.eot, after: 10)
        wire.now += 200
        wire.hand(Self.enq)
        wire.expect(Self.ack0, after: 10)
        wire.hand(Self.handshake("00HHD0000001R00L06"))
        wire.expect(Self.ack1, after: 10)
        wire.hand(Self.eot)
        wire.expect(Self.enq, after: 100)
        wire.hand(Self.ack0)
        let audit = try #require(wire.audit)
        wire.expect(DEXBlock(kind: .data, payload: audit, isLast: true).bytes, after: 10)
        wire.hand(Self.ack1)
        #expect(wire.events.last == .auditDelivered(text: audit))
    }

    /// A bid nobody answers is no session; a handheld that speaks while the machine bids wins.
    @Test func unansweredBidsAreQuietAndAHandheldWinsContention() {
        var wire = Wire(side: .machine)
        for _ in 0..<3 { #expect(wire.next()?.bytes == Self.enq) }
        _ = wire.next(limit: wire.now + 1_000)
        #expect(wire.events.isEmpty && wire.link.isIdle)
        #expect(wire.next()?.bytes == Self.enq)
        wire.hand(Self.enq)
        wire.expect(Self.ack0, after: 10, "the handheld's ENQ is answered: the machine is slave")
        wire.hand(Self.handshake("HHD0000001RR00L06"))
        wire.expect(Self.ack1, after: 10)
    }

    /// The port closing under a session ends it, with no EOT (no one to hear it), and nothing
    /// queued for the old connection goes out on the next.
    @Test func aPulledCableEndsTheSession() {
        var wire = Wire()
        toData(&wire)
        wire.take(wire.link.disconnected(at: wire.now, reason: "unix:/x lost: closed by the other end"))
        #expect(wire.failure == "data transfer: unix:/x lost: closed by the other end")
        #expect(wire.link.nextDeadline == nil && wire.link.isIdle)
    }

    /// Up to the data transfer's ENQ acknowledged.
    func toData(_ wire: inout Wire) {
        wire.hand(Self.enq)
        _ = wire.next()
        wire.hand(Self.handshake("HHD0000001RR00L06"))
        _ = wire.next()
        wire.hand(Self.eot)
        _ = wire.next()
        wire.hand(Self.ack0)
        _ = wire.next()
        wire.hand(Self.ack1)
        _ = wire.next()
        #expect(wire.next()?.bytes == Self.enq)
        wire.hand(Self.ack0)
    }
}
