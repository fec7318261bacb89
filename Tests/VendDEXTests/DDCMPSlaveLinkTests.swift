import Testing

@testable import VendDEX

/// The machine's side of DDCMP on manual time: the master's messages in at a given millisecond,
/// the slave's out when they are due, read back with the frame receiver (whose bytes are checked
/// against the specification in `DDCMPFrameTests`).
@Suite struct DDCMPSlaveLinkTests {
    static let audit = Array(
        ("DXS*VDD0000001*VA*V0/6*1\r\n" + String(repeating: "PA1*A1*150\r\nPA2*1*150*1*150\r\n", count: 20) + "DXE*1*1\r\n").utf8)
    static let whoAreYou: [UInt8] = [0x77, 0xE0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x26, 0x11, 0x26, 0x17, 0x30, 0x00, 0x41, 0x42, 0x0C]
    static let readAudit: [UInt8] = [0x77, 0xE2, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00]
    static let finish: [UInt8] = [0x77, 0xFF]

    /// A master on the other end: its message numbers, the link, the clock, what was reported.
    struct Master {
        var link = DDCMPSlaveLink(serialNumber: "VDD0000001")
        var now: Int64 = 0
        var events: [DDCMPLinkEvent] = []
        var audit: [UInt8]? = DDCMPSlaveLinkTests.audit
        /// The number of the master's last data message, and of the slave's last one received.
        var sent: UInt8 = 0
        var received: UInt8 = 0
        var address: UInt8 = 0x01
        private var reader = DDCMPFrameReceiver()

        mutating func take(_ new: [DDCMPLinkEvent]) {
            events += new
            if new.contains(where: { if case .readRequested = $0 { true } else { false } }) { link.supplyAudit(audit, at: now) }
        }

        mutating func say(_ bytes: [UInt8]) { take(link.receive(bytes, at: now)) }

        mutating func start() {
            sent = 0
            received = 0
            say(DDCMPControl(.start, address: address).bytes)
        }

        mutating func command(_ data: [UInt8]) {
            sent &+= 1
            say(DDCMPFrame.data(data, received: received, number: sent, address: address).bytes)
        }

        mutating func ack(_ number: UInt8? = nil) { say(DDCMPControl(.ack, number: number ?? received, address: address).bytes) }

        /// Lets `milliseconds` pass, running the link's timers; what it sent meanwhile, as frames.
        /// The default is a prompt master's wait: less than any ACK time-out of the slave's.
        mutating func hear(for milliseconds: Int64 = 200) -> [DDCMPFrame] {
            let end = now + milliseconds
            var bytes: [UInt8] = []
            while let deadline = link.nextDeadline, deadline <= end {
                now = max(now, deadline)
                take(link.advance(to: now))
                bytes += link.takeOutput(at: now)
            }
            now = end
            var frames: [DDCMPFrame] = []
            for token in reader.receive(bytes) {
                guard case .frame(let frame) = token else {
                    Issue.record("the slave sent \(token)")
                    continue
                }
                frames.append(frame)
                if case .data(let header, _) = frame { received = header.number }
            }
            return frames
        }

        /// Link, Who Are You, Read Data of `list`: returns the Read Data response.
        mutating func openRead(list: UInt8 = 1) -> [DDCMPFrame] {
            start()
            _ = hear()
            command(DDCMPSlaveLinkTests.whoAreYou)
            _ = hear()
            ack()
            command([0x77, 0xE2, 0x00, list, 0x01, 0x00, 0x00, 0x00, 0x00])
            return hear()
        }

        /// Acknowledges each block as it comes; the audit text read, block by block.
        mutating func readBlocks(limit: Int = 20) -> [[UInt8]] {
            var blocks: [[UInt8]] = []
            ack()
            for _ in 0..<limit {
                let frames = hear()
                guard case .data(let header, let data)? = frames.last, data.first == 0x99 else { break }
                blocks.append(Array(data.dropFirst(2)))
                ack()
                if header.isLast { break }
            }
            return blocks
        }
    }

    static func data(_ frames: [DDCMPFrame]) -> [[UInt8]] {
        frames.compactMap { if case .data(_, let data) = $0 { data } else { nil } }
    }

    @Test func startIsAnsweredWithStackAfterTheTurnaround() {
        var master = Master()
        master.start()
        #expect(master.link.takeOutput(at: 39).isEmpty, "nothing before the 40 ms turnaround")
        #expect(master.link.takeOutput(at: 40) == DDCMPControl(.stack, address: 1).bytes)
        #expect(DDCMPControl(.stack, address: 1).header == [0x05, 0x07, 0x40, 0x00, 0x00, 0x01])
    }

    @Test func onlyItsOwnAddressesAreAnswered() {
        var master = Master()
        master.address = 0x20
        master.start()
        #expect(master.hear().isEmpty, "another station's START")
        master.address = DDCMPByte.vendingMachine
        master.start()
        #expect(master.hear() == [.control(DDCMPControl(.stack, address: 0x07))])
    }

    @Test func whoAreYouIsAcknowledgedAndAnswered() {
        var master = Master()
        master.start()
        _ = master.hear()
        master.command(Self.whoAreYou)
        let frames = master.hear()
        #expect(frames.first == .control(DDCMPControl(.ack, number: 1, address: 1)))
        // 88 E0 01, the codes back, the serial number, version, manufacturer, extra reads, 00,
        // the default buffer.
        #expect(
            Self.data(frames) == [[0x88, 0xE0, 0x01, 0, 0, 0, 0] + Array("00000001".utf8) + [0x01, 0x00, 0x00, 0x00, 0x00, 0x00]])
        #expect(
            master.events == [
                .handheld(DDCMPHandheld(securityCode: [0, 0, 0, 0], date: [0x26, 0x11, 0x26], time: [0x17, 0x30, 0], userID: "AB", userType: 0x0C))
            ])
        guard case .data(let header, _)? = frames.last else { return }
        #expect(header.received == 1 && header.number == 1, "the slave's first message is number 1 and names the master's")
    }

    @Test func aFullAuditReadDeliversTheAuditAtFinish() {
        var master = Master()
        let response = master.openRead()
        #expect(response.first == .control(DDCMPControl(.ack, number: 2, address: 1)))
        let length = Self.audit.count
        #expect(Self.data(response) == [[0x88, 0xE2, 0x01, 0x01, 0x01, 0x00, 0x00, UInt8(length & 0xFF), UInt8(length >> 8)]])
        let blocks = master.readBlocks()
        #expect(blocks.flatMap { $0 } == Self.audit)
        #expect(blocks.count == (length + DDCMPSlaveLink.blockText - 1) / DDCMPSlaveLink.blockText && blocks.count > 1)
        #expect(!master.events.contains { if case .auditDelivered = $0 { true } else { false } }, "not before Finish")
        master.command(Self.finish)
        #expect(master.hear() == [.control(DDCMPControl(.ack, number: 3, address: 1))])
        #expect(master.events.last == .auditDelivered(text: Self.audit, resetsInterim: true))
        #expect(master.link.isIdle)
    }

    @Test func theBlocksAreNumberedFromZeroAndOnlyTheLastHasTheSelectFlag() {
        var master = Master()
        _ = master.openRead()
        master.ack()
        var numbers: [UInt8] = [], flags: [Bool] = []
        for _ in 0..<10 {
            guard case .data(let header, let data)? = master.hear().last else { break }
            numbers.append(data[1])
            flags.append(header.isLast)
            master.ack()
            if header.isLast { break }
        }
        #expect(numbers == (0..<UInt8(numbers.count)).map { $0 })
        #expect(flags == Array(repeating: false, count: flags.count - 1) + [true])
    }

    @Test func aSecurityReadLeavesTheInterimFigures() {
        var master = Master()
        _ = master.openRead(list: 2)
        #expect(master.readBlocks().flatMap { $0 } == Self.audit)
        master.command(Self.finish)
        _ = master.hear()
        #expect(master.events.last == .auditDelivered(text: Self.audit, resetsInterim: false))
    }

    @Test func aPartOfTheAuditIsReadFromAnOffset() {
        var master = Master()
        master.start()
        _ = master.hear()
        master.command([0x77, 0xE2, 0x00, 0x01, 0x01, 0x04, 0x00, 0x0A, 0x00])
        #expect(Self.data(master.hear()) == [[0x88, 0xE2, 0x01, 0x01, 0x01, 0x04, 0x00, 0x0A, 0x00]])
        #expect(master.readBlocks() == [Array(Self.audit[4..<14])])
    }

    @Test func otherListsAndNoAuditAreRejected() {
        var master = Master()
        #expect(Self.data(master.openRead(list: 64)) == [[0x88, 0xE2, 0x00]])
        master = Master()
        master.audit = nil
        #expect(Self.data(master.openRead()) == [[0x88, 0xE2, 0x00]])
        master.ack()
        master.command(Self.finish)
        _ = master.hear()
        guard case .failed(_, let reason)? = master.events.last else {
            Issue.record("a Finish without a read was not reported")
            return
        }
        #expect(reason.contains("without reading the audit") && reason.contains("no audit could be made"))
    }

    @Test(arguments: [(UInt8(0xE3), "Write Data"), (0xE1, "Program Slave Device"), (0xE4, "Delete Data"), (0xE6, "Read Memory")])
    func writeAndProgramCommandsAreRefused(code: UInt8, name: String) {
        var master = Master()
        master.start()
        _ = master.hear()
        master.command([0x77, code, 0x00, 0x01, 0x00, 0x00])
        let frames = master.hear()
        #expect(frames.first == .control(DDCMPControl(.ack, number: 1, address: 1)))
        #expect(Self.data(frames) == [[0x88, code, 0x00]])
        #expect(master.events == [.warning("\(name) refused: vendd only lets a DDCMP handheld read the audit")])
        master.ack()
        master.command(Self.finish)
        _ = master.hear()
        #expect(master.events.last == .failed(stage: "after START", reason: "the handheld finished without reading the audit (refused: \(name))"))
    }

    @Test func aNACKedBlockIsSentAgainAndAWrongNumberIsNotAnAcknowledgement() {
        var master = Master()
        _ = master.openRead()
        master.ack()
        let first = master.hear()
        guard case .data(let header, let data)? = first.last else {
            Issue.record("no first block")
            return
        }
        // NACK naming the message before: the block was not received.
        master.say(DDCMPControl(.nack, number: header.number &- 1, reason: .dataCRC, address: 1).bytes)
        #expect(master.hear() == [.data(header, data)])
        // An ACK of the wrong number: sent again too.
        master.ack(header.number &- 1)
        #expect(master.hear() == [.data(header, data)])
        // A NACK naming the block acknowledges it (§3.7.2.1).
        master.say(DDCMPControl(.nack, number: header.number, address: 1).bytes)
        guard case .data(let next, let nextData)? = master.hear().last else {
            Issue.record("no second block")
            return
        }
        #expect(next.number == header.number &+ 1 && nextData[1] == 1)
        #expect(master.events.filter { if case .warning = $0 { true } else { false } }.count == 2)
    }

    @Test func anUnacknowledgedBlockIsSentFiveTimesThenTheSessionFails() {
        var master = Master()
        _ = master.openRead()
        master.ack()
        var copies = 0
        for _ in 0..<20 {
            let frames = master.hear(for: 400)
            copies += Self.data(frames).count
        }
        #expect(copies == 5, "the first block and four more attempts")
        guard case .failed(let stage, let reason)? = master.events.last else {
            Issue.record("the session did not fail")
            return
        }
        #expect(stage == "block 1 of 3" && reason == "block 1 of 3 was not acknowledged after 5 attempts")
        #expect(master.link.isIdle)
        #expect(!master.events.contains { if case .auditDelivered = $0 { true } else { false } })
    }

    @Test func theAckTimeoutCountsTheBlocksTimeOnTheWire() {
        var master = Master()
        _ = master.openRead()
        master.ack()
        // 8 + 2 + 240 + 2 bytes at 2400 baud take 1050 ms: the block is sent again only after the
        // turnaround, its own time on the wire and the 170 ms ACK time-out.
        _ = master.hear(for: 40 + 1_050 + 170 - 1)
        #expect(!master.events.contains { if case .warning = $0 { true } else { false } }, "no retransmission before the ACK time-out")
        _ = master.hear(for: 20)
        #expect(master.events.contains { if case .warning = $0 { true } else { false } })
    }

    @Test func aCorruptCommandIsNACKedOnceThenSilenceUntilAGoodOne() {
        var master = Master()
        master.start()
        _ = master.hear()
        var bad = DDCMPFrame.data(Self.whoAreYou, received: 0, number: 1, address: 1).bytes
        bad[bad.count - 1] ^= 0xFF
        master.say(bad)
        #expect(master.hear() == [.control(DDCMPControl(.nack, number: 0, reason: .dataCRC, address: 1))])
        master.say(bad)
        #expect(master.hear().isEmpty, "one NACK per corrupt sequence (§3.7.2.2 note 1)")
        master.say([0x13, 0x37, 0x81, 0x00])
        _ = master.hear(for: 100)
        master.command(Self.whoAreYou)
        #expect(master.hear().first == .control(DDCMPControl(.ack, number: 1, address: 1)))
    }

    @Test func aRepeatedMessageIsNACKedWithItsNumber() {
        var master = Master()
        _ = master.openRead()
        _ = master.readBlocks()
        master.command(Self.finish)
        _ = master.hear()
        // The master did not hear the ACK and sends Finish again: NACK naming it (§6.2.2.1).
        master.say(DDCMPFrame.data(Self.finish, received: master.received, number: master.sent, address: 1).bytes)
        #expect(master.hear() == [.control(DDCMPControl(.nack, number: 3, address: 1))])
        #expect(master.events.filter { if case .auditDelivered = $0 { true } else { false } }.count == 1, "delivered once")
    }

    @Test func silenceEndsTheSessionAfterTheLinkTimeout() {
        var master = Master()
        master.start()
        _ = master.hear(for: 4_900)
        #expect(!master.link.isIdle)
        _ = master.hear(for: 200)
        #expect(master.events == [.failed(stage: "after START", reason: "the handheld fell silent for 5 s")])
    }

    @Test func aLastBlockAcknowledgedWithoutFinishDeliversNothing() {
        var master = Master()
        _ = master.openRead()
        #expect(master.readBlocks().flatMap { $0 } == Self.audit)
        _ = master.hear(for: 20_000)
        #expect(master.events.last == .failed(stage: "after the audit's last block", reason: "the handheld fell silent for 15 s"))
        #expect(!master.events.contains { if case .auditDelivered = $0 { true } else { false } })
    }

    @Test func aPulledCableMidTransferDeliversNothing() {
        var master = Master()
        _ = master.openRead()
        master.ack()
        _ = master.hear()
        master.take(master.link.disconnected(at: master.now, reason: "the cable was pulled"))
        #expect(master.events.last == .failed(stage: "block 1 of 3", reason: "the cable was pulled"))
        #expect(master.link.isIdle && master.link.nextDeadline == nil)
        // The next read goes through whole.
        _ = master.openRead()
        #expect(master.readBlocks().flatMap { $0 } == Self.audit)
        master.command(Self.finish)
        _ = master.hear()
        #expect(master.events.last == .auditDelivered(text: Self.audit, resetsInterim: true))
    }

    @Test func aStartMidSessionAbortsItAndStartsAgain() {
        var master = Master()
        _ = master.openRead()
        master.ack()
        _ = master.hear()
        master.start()
        #expect(master.hear() == [.control(DDCMPControl(.stack, address: 1))])
        #expect(master.events.last == .failed(stage: "block 1 of 3", reason: "the handheld started the link again (START)"))
        // A START repeated before anything was said is the master missing the STACK: no failure.
        master.events = []
        master.start()
        #expect(master.hear() == [.control(DDCMPControl(.stack, address: 1))])
        #expect(master.events.isEmpty)
    }

    @Test func aMessageCutShortIsNACKedAfterTheInterCharacterTimeout() {
        var master = Master()
        master.start()
        _ = master.hear()
        master.say(Array(DDCMPFrame.data(Self.whoAreYou, received: 0, number: 1, address: 1).bytes.prefix(12)))
        #expect(master.hear(for: 64).isEmpty)
        #expect(master.hear(for: 100) == [.control(DDCMPControl(.nack, number: 0, reason: .dataCRC, address: 1))])
    }
}

/// The security and pass code of Who Are You (EVA-DTS 6.1.1 §3.6.4.1.1 p.82–83, §6.1.6 p.178).
@Suite struct DDCMPPassCodeTests {
    typealias Master = DDCMPSlaveLinkTests.Master

    /// Who Are You with S2 S1 P2 P1 = `code`.
    static func whoAreYou(_ code: [UInt8]) -> [UInt8] {
        var command = DDCMPSlaveLinkTests.whoAreYou
        command.replaceSubrange(3..<7, with: code)
        return command
    }

    /// What the slave answered to Who Are You.
    static func answer(_ master: inout Master, code: [UInt8]) -> [UInt8]? {
        master.start()
        _ = master.hear()
        master.command(whoAreYou(code))
        return DDCMPSlaveLinkTests.data(master.hear()).first
    }

    /// "If the requested code is not zero, the slave grants access and stores the requested code
    /// immediately as the new code. Further requests only gain access with this newly set code."
    @Test func theFirstNonZeroCodeIsLearntAndThenRequired() {
        var master = Master()
        #expect(Self.answer(&master, code: [0, 0, 0, 0])?.prefix(3) == [0x88, 0xE0, 0x01], "zero kept: any code reads")
        #expect(!master.events.contains { if case .passCodeLearned = $0 { true } else { false } }, "zero is no code to learn")
        master.link.passCode = nil
        master.events = []
        #expect(Self.answer(&master, code: [0x12, 0x34, 0x56, 0x78])?.prefix(7) == [0x88, 0xE0, 0x01, 0x12, 0x34, 0x56, 0x78])
        #expect(master.events.contains { if case .passCodeLearned(let code, _) = $0 { code == [0x12, 0x34, 0x56, 0x78] } else { false } })
        #expect(master.link.passCode == [0x12, 0x34, 0x56, 0x78])
        // "Denial Code = 01 - Security or Pass Codes do not match" (p.82): 88 E0 00 01.
        #expect(Self.answer(&master, code: [0x12, 0x34, 0x56, 0x79]) == [0x88, 0xE0, 0x00, 0x01])
        #expect(Self.answer(&master, code: [0, 0, 0, 0]) == [0x88, 0xE0, 0x00, 0x01], "zero no longer reads")
        #expect(Self.answer(&master, code: [0x12, 0x34, 0x56, 0x78])?.prefix(3) == [0x88, 0xE0, 0x01])
    }

    /// A master refused at Who Are You reads nothing: its Read Data is rejected, no audit asked.
    @Test func aRefusedMasterCannotRead() {
        var master = Master()
        master.link.passCode = [1, 2, 3, 4]
        #expect(Self.answer(&master, code: [9, 9, 9, 9]) == [0x88, 0xE0, 0x00, 0x01])
        master.ack()
        master.command(DDCMPSlaveLinkTests.readAudit)
        #expect(DDCMPSlaveLinkTests.data(master.hear()).first == [0x88, 0xE2, 0x00])
        #expect(!master.events.contains { if case .readRequested = $0 { true } else { false } })
    }
}
