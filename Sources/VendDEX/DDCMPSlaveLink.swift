/// The limits of EVA-DTS 6.1.1 table 2 (§3.4.6), in milliseconds, as the slave keeps them.
public struct DDCMPTimers: Sendable, Equatable {
    /// How often the slave sends one data message before it gives up (max data transfer attempts).
    public var attempts = 5
    /// The longest the slave waits for the master's next message (received data message/link
    /// time-out), and the longer one while a Read Data is under way.
    public var link: Int64 = 5_000
    public var linkAroundRead: Int64 = 15_000
    /// How long the slave waits for the ACK of a data message, from the end of the message.
    public var ack: Int64 = 170
    /// The longest silence between two characters of a message.
    public var interCharacter: Int64 = 65
    /// The minimum time between the end of what the slave heard and what it sends (Rx to Tx).
    public var turnaround: Int64 = 40

    public init() {}

    public static let specification = DDCMPTimers()
}

/// What a DDCMP session came to.
public enum DDCMPLinkEvent: Sendable, Equatable {
    /// The master said who it is (Who Are You), and its codes were accepted.
    case handheld(DDCMPHandheld)
    /// The master sent a non-zero security and pass code while the machine kept none: it is the
    /// machine's code from now on ("if the requested code is not zero, the slave grants access
    /// and stores the requested code immediately as the new code", §6.1.6, p.178).
    case passCodeLearned([UInt8], by: DDCMPHandheld)
    /// The master asked for `list` (1: the audit, 2: the security read): the link needs the audit
    /// now (`supplyAudit`), before it answers.
    case readRequested(list: UInt8)
    /// The master acknowledged the last block of the audit and then sent Finish: the whole audit
    /// reached it. `resetsInterim` for list 1 (audit collection), not for list 2 (security read).
    case auditDelivered(text: [UInt8], resetsInterim: Bool)
    /// The session ended without a read acknowledged to its last block; `stage` says where.
    case failed(stage: String, reason: String)
    /// Something went wrong but the session carries on (a retransmission, a refused command).
    case warning(String)
}

/// The slave (machine) side of Enhanced DDCMP (EVA-DTS 6.1.1 chapter 3): START answered with
/// STACK, numbered data messages each answered ACK or NACK, retransmission up to the limit, Who
/// Are You, Read Data of the audit (lists 1 and 2) sent in `99` blocks, Finish. Other commands
/// (Write Data, Program Slave Device, Delete Data, Program Module, Read Memory) are refused with
/// their rejected response. Pure: bytes and the time they came in, bytes to send and when; the
/// caller owns the port and the clock (milliseconds, monotonic).
public struct DDCMPSlaveLink: Sendable {
    /// A data message of the slave's, waiting for its ACK.
    private struct Sending: Sendable, Equatable {
        var bytes: [UInt8]
        var number: UInt8
        var what: String
        var tries = 1
        var deadline: Int64
        /// The last block of the read under way.
        var endsRead: Bool
    }

    private struct Queued: Sendable, Equatable {
        var data: [UInt8]
        var isLast: Bool
        var what: String
        var endsRead: Bool
    }

    private struct Read: Sendable, Equatable {
        var list: UInt8
        var text: [UInt8]
    }

    /// The machine serial number of the Who Are You response: 8 ASCII digits, most significant
    /// first (§6.1.1), from the communication ID given.
    public let serialNumber: [UInt8]
    /// The station address answered besides 01 (point to point, which every slave answers, §3.6.2.1):
    /// by default 07, table 4's vending machine.
    public let address: UInt8
    public let baudRate: Int
    public let timers: DDCMPTimers
    /// The audit text in one `99` block at most: with `99 B` and the CRC, well inside the
    /// 256-byte buffer a master has by default (§3.4.4).
    public static let blockText = 240

    private var receiver = DDCMPFrameReceiver()
    private var outgoing: [(due: Int64, bytes: [UInt8])] = []
    private var lastByteAt: Int64 = 0
    /// Between START and the end of the session (Finish, a failure, the link timeout).
    private var linked = false
    /// Finish was acknowledged: the session is over, but a repeated Finish (our ACK lost) is
    /// still answered until the master goes quiet.
    private var finished = false
    private var stationAddress = DDCMPByte.pointToPoint
    /// The number of the last data message received correctly, and of the last one sent (§3.5.1.2).
    private var received: UInt8 = 0
    private var sent: UInt8 = 0
    private var sending: Sending?
    private var queue: [Queued] = []
    /// A NACK went out for a corrupt message and nothing good came since: stay silent (§3.7.2.2
    /// note 1).
    private var nacked = false
    private var linkDeadline: Int64?
    private var handheld: DDCMPHandheld?
    /// The Read Data waiting for `supplyAudit`.
    private var requested: (list: UInt8, record: UInt8, offset: Int, length: Int)?
    private var read: Read?
    /// The read whose last block the master acknowledged, delivered at Finish.
    private var completed: Read?
    private var refused: [String] = []
    /// The security and pass code (S2 S1 P2 P1) the machine keeps; nil: zero, which "grants
    /// access on every requested code" (§6.1.6, p.178). Set by the caller from its durable state
    /// between sessions; a code learnt here is reported with `.passCodeLearned`.
    public var passCode: [UInt8]?
    /// Who Are You was accepted in this session: only then is the audit read.
    private var admitted = false

    public init(
        serialNumber: String, address: UInt8 = DDCMPByte.vendingMachine, baudRate: Int = 2_400, timers: DDCMPTimers = .specification
    ) {
        // "Normally limited to digits 0-9" (§3.6.4.1.2 note 1): the ID's digits, the last 8.
        let digits = Array(serialNumber.utf8.filter { (0x30...0x39).contains($0) }.suffix(8))
        self.serialNumber = Array(repeating: UInt8(ascii: "0"), count: 8 - digits.count) + digits
        self.address = address
        self.baudRate = baudRate
        self.timers = timers
    }

    /// Between sessions: vending goes on undisturbed.
    public var isIdle: Bool { !linked || finished }

    /// The audit for the Read Data just asked for (after `.readRequested`); nil: none can be
    /// made, and the read is refused.
    public mutating func supplyAudit(_ text: [UInt8]?, at now: Int64) {
        guard let request = requested else { return }
        requested = nil
        guard let text else {
            refused.append("Read Data of list \(request.list): no audit could be made")
            return transmit([DDCMPByte.response, 0xE2, 0x00], what: "Read Data rejected", at: now)
        }
        let end = request.length == 0 ? text.count : request.offset + request.length
        guard request.offset <= text.count, end <= text.count else {
            refused.append("Read Data of list \(request.list) from byte \(request.offset), \(request.length) bytes: past the audit's \(text.count)")
            return transmit([DDCMPByte.response, 0xE2, 0x00], what: "Read Data rejected", at: now)
        }
        let part = Array(text[request.offset..<end])
        // The length of what follows, or FFFF: "unknown", the select flag ends it (§3.6.4.1.3 note 6).
        let length = part.count < 0xFFFF ? part.count : 0xFFFF
        let accepted: [UInt8] = [
            DDCMPByte.response, 0xE2, 0x01, request.list, request.record, UInt8(request.offset & 0xFF), UInt8(request.offset >> 8 & 0xFF),
            UInt8(length & 0xFF), UInt8(length >> 8),
        ]
        read = Read(list: request.list, text: part)
        transmit(accepted, what: "Read Data accepted", at: now)
        // Blocks numbered from 0 (§3.6.4.2); the last one carries the select flag, which masters
        // that do not count bytes wait for.
        let chunks = stride(from: 0, to: max(part.count, 1), by: Self.blockText).map { Array(part[$0..<min($0 + Self.blockText, part.count)]) }
        for (index, chunk) in chunks.enumerated() {
            let last = index == chunks.count - 1
            queue.append(
                Queued(
                    data: [DDCMPByte.dataBlock, UInt8(index & 0xFF)] + chunk, isLast: last, what: "block \(index + 1) of \(chunks.count)",
                    endsRead: last))
        }
    }

    // MARK: - Time and bytes

    /// When `advance(to:)` must next be called (a byte due, a timer), if ever.
    public var nextDeadline: Int64? {
        var deadlines = outgoing.map(\.due)
        if let sending { deadlines.append(sending.deadline) }
        // The link time-out waits while a message of the slave's is out (its attempts bound it).
        if let linkDeadline, sending == nil { deadlines.append(linkDeadline) }
        if receiver.isInsideMessage { deadlines.append(lastByteAt + timers.interCharacter) }
        return deadlines.min()
    }

    /// The bytes due by `now`, in order.
    public mutating func takeOutput(at now: Int64) -> [UInt8] {
        let due = outgoing.prefix { $0.due <= now }
        outgoing.removeFirst(due.count)
        return due.flatMap(\.bytes)
    }

    public mutating func receive(_ bytes: [UInt8], at now: Int64) -> [DDCMPLinkEvent] {
        guard !bytes.isEmpty else { return [] }
        var events = expireInterCharacter(at: now)
        lastByteAt = now
        for token in receiver.receive(bytes) { events += handle(token, at: now) }
        return events
    }

    /// Runs the timers that have expired by `now`.
    public mutating func advance(to now: Int64) -> [DDCMPLinkEvent] {
        var events = expireInterCharacter(at: now)
        if var sending, now >= sending.deadline {
            guard sending.tries < timers.attempts else {
                return events + fail("\(sending.what) was not acknowledged after \(sending.tries) attempts", at: now)
            }
            sending.tries += 1
            events.append(.warning("no ACK for \(sending.what) within \(timers.ack) ms; attempt \(sending.tries) of \(timers.attempts)"))
            resend(&sending, at: now)
        }
        if let linkDeadline, now >= linkDeadline, sending == nil {
            if finished { return events + end(at: now) }
            let timeout = read != nil || requested != nil ? timers.linkAroundRead : timers.link
            events += fail("the handheld fell silent for \(timeout / 1_000) s", at: now)
        }
        return events
    }

    /// The port closed under the link (cable pulled, optical head gone): a session under way
    /// fails, and what was still to be sent is dropped.
    public mutating func disconnected(at now: Int64, reason: String) -> [DDCMPLinkEvent] {
        receiver = DDCMPFrameReceiver()
        outgoing.removeAll()
        guard !isIdle else { return end(at: now) }
        return fail(reason, at: now)
    }

    // MARK: - Messages

    private mutating func handle(_ token: DDCMPToken, at now: Int64) -> [DDCMPLinkEvent] {
        switch token {
        case .noise:
            return []
        case .badHeader:
            return refuse(.headerCRC, "a message header with a wrong CRC", at: now)
        case .badData(let header, let reason):
            guard header.address == stationAddress else { return [] }
            return refuse(.dataCRC, reason, at: now)
        case .tooLong(let header):
            guard header.address == stationAddress else { return [] }
            return refuse(.tooLong, "a data message of \(header.length) bytes", at: now)
        case .frame(.control(let control)):
            return handle(control, at: now)
        case .frame(.data(let header, let data)):
            return handle(header, data, at: now)
        }
    }

    private mutating func handle(_ control: DDCMPControl, at now: Int64) -> [DDCMPLinkEvent] {
        if control.kind == .start {
            guard control.address == DDCMPByte.pointToPoint || control.address == address else { return [] }
            return start(control, at: now)
        }
        guard linked, !finished, control.address == stationAddress else { return [] }
        linkDeadline = now + currentLinkTimeout
        guard var sending, control.kind == .ack || control.kind == .nack else { return [] }
        // An ACK, or a NACK, naming the message sent is its acknowledgement (§3.7.2.1).
        if control.number == sending.number { return acknowledged(at: now) }
        guard sending.tries < timers.attempts else {
            return fail("\(sending.what) was answered out of sequence \(sending.tries) times", at: now)
        }
        sending.tries += 1
        let what = control.kind == .ack ? "an ACK" : "a NACK"
        resend(&sending, at: now)
        return [
            .warning(
                "\(what) for message \(control.number) while \(sending.what) was message \(sending.number); attempt \(sending.tries) of \(timers.attempts)"
            )
        ]
    }

    private mutating func handle(_ header: DDCMPDataHeader, _ data: [UInt8], at now: Int64) -> [DDCMPLinkEvent] {
        guard linked, header.address == stationAddress else { return [] }
        linkDeadline = now + currentLinkTimeout
        var events: [DDCMPLinkEvent] = []
        // A data message that names the slave's message is also its ACK ("piggy-back", §6.2.2.6).
        if !finished, let sending, header.received == sending.number { events += acknowledged(at: now) }
        guard header.number == received &+ 1, !finished else {
            // Already received (the master did not hear the ACK): NACK with the number it gave,
            // which the master reads as the acknowledgement (§3.5.1.2, §6.2.2.1). Out of sequence:
            // NACK once, then silence (§3.7.2.2).
            if header.number == received || !nacked {
                nacked = header.number != received
                send(DDCMPControl(.nack, number: received, address: stationAddress).bytes, at: now)
            }
            return events
        }
        received = header.number
        nacked = false
        send(DDCMPControl(.ack, number: received, address: stationAddress).bytes, at: now)
        guard let command = DDCMPCommand(data) else {
            return events + [.warning("a data message that is no command (\(data.prefix(2).map { hex($0) }.joined(separator: " "))) ignored")]
        }
        switch command {
        case .whoAreYou(let handheld):
            self.handheld = handheld
            // §6.1.6 (p.178): a zero code kept "grants access on every requested code"; a
            // non-zero one asked for while none is kept is granted and stored; "further requests
            // only gain access with this newly set code".
            let asked = handheld.securityCode
            let learns = passCode == nil && asked.contains { $0 != 0 }
            guard passCode == nil || passCode == asked else {
                admitted = false
                refused.append("Who Are You: the security or pass code does not match the machine's")
                // 88 E0 00 01: rejected, denial code 01 "Security or Pass Codes do not match" (p.82).
                transmit([DDCMPByte.response, 0xE0, 0x00, 0x01], what: "Who Are You rejected", at: now)
                return events + [
                    .warning(
                        "\(handheld.description) refused: its security or pass code is not the one the machine learnt (a technician clears it with vendctl dex clear-pass-code)"
                    )
                ]
            }
            admitted = true
            if learns { passCode = asked }
            // 88 E0 01, the codes as received, the serial number, software version 1,
            // manufacturer 0 (ignored), no extra reads, 00, buffer 0000 = the default 256 bytes
            // (§3.6.4.1.1).
            let response = [DDCMPByte.response, 0xE0, 0x01] + asked + serialNumber + [0x01, 0x00, 0x00, 0x00, 0x00, 0x00]
            transmit(response, what: "Who Are You accepted", at: now)
            return events + (learns ? [.passCodeLearned(asked, by: handheld)] : []) + [.handheld(handheld)]
        case .readData(let list, let record, let offset, let length):
            guard admitted || passCode == nil else {
                refused.append("Read Data of list \(list) before an accepted Who Are You")
                transmit([DDCMPByte.response, 0xE2, 0x00], what: "Read Data rejected", at: now)
                return events + [.warning("Read Data of list \(list) refused: the machine keeps a pass code and no Who Are You gave it")]
            }
            guard list == 1 || list == 2 else {
                refused.append("Read Data of list \(list)")
                transmit([DDCMPByte.response, 0xE2, 0x00], what: "Read Data rejected", at: now)
                return events + [.warning("Read Data of list \(list) refused: vendd serves the audit (list 1) and the security read (list 2)")]
            }
            requested = (list, record, offset, length)
            read = nil
            completed = nil
            linkDeadline = now + timers.linkAroundRead
            return events + [.readRequested(list: list)]
        case .finish:
            return events + finish(at: now)
        case .other(let code):
            let name = DDCMPCommand.name(code)
            refused.append(name)
            var rejected = [DDCMPByte.response, code, 0x00]
            // Program Module's rejection carries an error code (§3.6.4.1.6).
            if code == 0xE5 { rejected.append(0x01) }
            transmit(rejected, what: "\(name) rejected", at: now)
            return events + [.warning("\(name) refused: vendd only lets a DDCMP handheld read the audit")]
        }
    }

    // MARK: - Session

    private mutating func start(_ control: DDCMPControl, at now: Int64) -> [DDCMPLinkEvent] {
        // A START mid-session aborts it (§3.5.2.2); one before anything was said is the master
        // trying again because it missed the STACK.
        var events: [DDCMPLinkEvent] = []
        if linked, !finished, handheld != nil || read != nil || requested != nil {
            events = fail("the handheld started the link again (START)", at: now)
        }
        outgoing.removeAll()
        linked = true
        finished = false
        stationAddress = control.address
        received = 0
        sent = 0
        sending = nil
        queue = []
        nacked = false
        handheld = nil
        admitted = false
        requested = nil
        read = nil
        completed = nil
        refused = []
        linkDeadline = now + timers.link
        // STACK: sbd 00 "default slave", mbd 00 "unchanged": the port stays at its rate (§3.6.2).
        send(DDCMPControl(.stack, number: 0, fill: 0, address: stationAddress).bytes, at: now)
        return events
    }

    private mutating func finish(at now: Int64) -> [DDCMPLinkEvent] {
        finished = true
        sending = nil
        queue = []
        linkDeadline = now + timers.link
        if let completed {
            return [.auditDelivered(text: completed.text, resetsInterim: completed.list == 1)]
        }
        let what = read != nil || requested != nil ? "before the audit's last block was acknowledged" : "without reading the audit"
        let why = refused.isEmpty ? "" : " (refused: \(refused.joined(separator: "; ")))"
        return [.failed(stage: stage, reason: "the handheld finished \(what)\(why)")]
    }

    private mutating func acknowledged(at now: Int64) -> [DDCMPLinkEvent] {
        guard let done = sending else { return [] }
        sending = nil
        if done.endsRead, let read { completed = read }
        if !queue.isEmpty {
            let next = queue.removeFirst()
            transmit(next.data, isLast: next.isLast, what: next.what, endsRead: next.endsRead, at: now)
        }
        return []
    }

    private var currentLinkTimeout: Int64 { read != nil || requested != nil ? timers.linkAroundRead : timers.link }

    private var stage: String {
        if let sending { return sending.what }
        if let read, completed == nil { return "the audit transfer (list \(read.list))" }
        if completed != nil { return "after the audit's last block" }
        return handheld == nil ? "after START" : "after Who Are You"
    }

    // MARK: - Sending

    /// Sends `data` as the slave's next data message, or queues it behind the one not yet
    /// acknowledged.
    private mutating func transmit(_ data: [UInt8], isLast: Bool = false, what: String, endsRead: Bool = false, at now: Int64) {
        guard sending == nil else {
            return queue.append(Queued(data: data, isLast: isLast, what: what, endsRead: endsRead))
        }
        sent &+= 1
        let bytes = DDCMPFrame.data(data, isLast: isLast, received: received, number: sent, address: stationAddress).bytes
        let due = send(bytes, at: now)
        sending = Sending(bytes: bytes, number: sent, what: what, deadline: due + wireTime(bytes.count) + timers.ack, endsRead: endsRead)
    }

    private mutating func resend(_ message: inout Sending, at now: Int64) {
        let due = send(message.bytes, at: now)
        message.deadline = due + wireTime(message.bytes.count) + timers.ack
        sending = message
    }

    /// Queues `bytes` past the turnaround and behind what is already queued; returns when they
    /// start.
    @discardableResult
    private mutating func send(_ bytes: [UInt8], at now: Int64) -> Int64 {
        let after = outgoing.last.map { $0.due + wireTime($0.bytes.count) } ?? now
        let due = max(now + timers.turnaround, after)
        outgoing.append((due, bytes))
        return due
    }

    /// How long `count` bytes take on the wire (10 bits each).
    private func wireTime(_ count: Int) -> Int64 { Int64((count * 10 * 1_000 + baudRate - 1) / max(baudRate, 1)) }

    /// A corrupt message: NACK it once, unless the slave is waiting for an ACK (a corrupt ACK is
    /// answered by sending again when the ACK time-out expires, §3.5.2.2).
    private mutating func refuse(_ reason: DDCMPControl.NACKReason, _ why: String, at now: Int64) -> [DDCMPLinkEvent] {
        guard linked, !finished, sending == nil, !nacked else { return [] }
        nacked = true
        send(DDCMPControl(.nack, number: received, reason: reason, address: stationAddress).bytes, at: now)
        return [.warning("NACK for \(why)")]
    }

    private mutating func expireInterCharacter(at now: Int64) -> [DDCMPLinkEvent] {
        guard receiver.isInsideMessage, now >= lastByteAt + timers.interCharacter, let token = receiver.abandonMessage() else { return [] }
        return handle(token, at: now)
    }

    private mutating func fail(_ reason: String, at now: Int64) -> [DDCMPLinkEvent] {
        let stage = self.stage
        _ = end(at: now)
        return [.failed(stage: stage, reason: reason)]
    }

    /// Back to waiting for a START; whatever was read or queued is forgotten.
    private mutating func end(at now: Int64) -> [DDCMPLinkEvent] {
        linked = false
        finished = false
        sending = nil
        queue = []
        linkDeadline = nil
        handheld = nil
        admitted = false
        requested = nil
        read = nil
        completed = nil
        refused = []
        return []
    }
}
