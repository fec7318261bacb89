/// The timers of EVA-DTS 6.1.1 §4.5.8, in milliseconds, and vendd's retry limit.
public struct DEXTimers: Sendable, Equatable {
    /// The wait before answering anything (half-duplex turnaround, ≥ 10 ms).
    public var turnaround: Int64 = 10
    /// The pause before the machine starts the second or third session (≥ 100 ms).
    public var sessionPause: Int64 = 100
    /// Timer A: how long a sender waits for the answer to an ENQ or a block.
    public var response: Int64 = 1_000
    /// Timer B: the longest silence between two characters of a block.
    public var interCharacter: Int64 = 100
    /// Timer D (2 s): the longest silence inside a handshake or a data transfer, detected with
    /// the margin p.115 asks for: "it is recommended that devices wait at least 2.1 to 2.2
    /// seconds before detecting a Timer D timeout situation".
    public var inactivity: Int64 = 2_150
    /// After a WACK the sender waits 100–500 ms before asking again with ENQ.
    public var afterWACK: Int64 = 300
    /// The overall bound from the first character: then the machine goes back to vending.
    public var overall: Int64 = 60_000
    /// With the machine making the first handshake: how often it bids (sends ENQ) while idle.
    public var bidInterval: Int64 = 2_000
    /// How often one ENQ or block is tried (NAKs, timeouts) before the session is given up; the
    /// specification leaves the number to UCS/DSD.
    public var attempts = 3

    public init() {}

    public static let specification = DEXTimers()
}

/// Who makes the first handshake (§4.5.1). The machine always answers a handheld that starts.
public enum DEXFirstHandshakeSide: String, Sendable, Equatable {
    /// The handheld starts (NAMA/EVA's recommendation since 2002): the machine waits for its ENQ.
    case handheld
    /// The machine also bids for the link every `bidInterval`, for handhelds that wait for it.
    case machine
}

/// What a DEX session came to.
public enum DEXLinkEvent: Sendable, Equatable {
    /// A valid first handshake: who is there and what they want. For a read, the link needs the
    /// audit now (`supplyAudit`), before it answers with the second handshake.
    case handshake(DEXFirstHandshake, machineFirst: Bool)
    /// The handheld acknowledged the audit's last block: the whole audit reached it.
    case auditDelivered(text: [UInt8])
    /// The handheld sent a configuration and ended its session properly.
    case configurationReceived(text: [UInt8])
    /// The session ended without its transfer; `stage` says where, `reason` why.
    case failed(stage: String, reason: String)
    /// Something went wrong but the session carries on (a block NAKed, a retry).
    case warning(String)
}

/// The machine's side of DEX/UCS (EVA-DTS 6.1.1 chapter 4): the first and second handshakes in
/// either direction, then the audit sent or a configuration received, with the ACK0/ACK1
/// alternation, NAK and retry, WACK, EOT and every timer. Pure: bytes and the time they came
/// in, bytes to send and when; the caller owns the port and the clock (milliseconds, monotonic).
public struct DEXMachineLink: Sendable {
    private enum Session: Sendable, Equatable {
        case firstHandshake, secondHandshake, data

        var name: String {
            switch self {
            case .firstHandshake: "first handshake"
            case .secondHandshake: "second handshake"
            case .data: "data transfer"
            }
        }
    }

    /// The machine sends: ENQ (`next == -1`), then each block, then EOT.
    private struct Sending: Sendable, Equatable {
        var session: Session
        var blocks: [DEXBlock]
        var next = -1
        var tries = 1
        var deadline: Int64
        /// Waiting out a WACK: ENQ again at `deadline`.
        var afterWACK = false
    }

    /// The machine answers: ENQ, blocks, EOT.
    private struct Receiving: Sendable, Equatable {
        var session: Session
        var started = false
        /// The acknowledgement the next good block gets: ACK1 first, since ENQ got ACK0.
        var nextAck = 1
        var text: [UInt8] = []
        var lastReply: [UInt8] = []
        var hasLast = false
        var badBlocks = 0
        var deadline: Int64
    }

    private enum Phase: Sendable, Equatable {
        case idle(nextBid: Int64?)
        case sending(Sending)
        case receiving(Receiving)
        case pausing(until: Int64, then: Session)
    }

    public let communicationID: String
    public let revision: String
    public let firstHandshakeSide: DEXFirstHandshakeSide
    public let timers: DEXTimers
    private var phase: Phase
    private var receiver = DEXFrameReceiver()
    private var outgoing: [(due: Int64, bytes: [UInt8])] = []
    /// The first handshake of the session under way, and who made it.
    private var request: DEXFirstHandshake?
    private var machineFirst = false
    private var response = DEXResponse.ok
    private var audit: [UInt8]?
    private var lastByteAt: Int64 = 0
    /// When the session's first character came: the overall 60 s bound.
    private var sessionStart: Int64?

    public init(
        communicationID: String, revision: String = "R00L06", firstHandshakeSide: DEXFirstHandshakeSide = .handheld,
        timers: DEXTimers = .specification, now: Int64
    ) {
        self.communicationID = communicationID
        self.revision = revision
        self.firstHandshakeSide = firstHandshakeSide
        self.timers = timers
        phase = .idle(nextBid: firstHandshakeSide == .machine ? now + timers.bidInterval : nil)
    }

    /// Between sessions: vending goes on undisturbed.
    public var isIdle: Bool { if case .idle = phase { true } else { false } }

    /// The audit to send for the read just asked for (after `.handshake`).
    public mutating func supplyAudit(_ text: [UInt8]) { audit = text }

    // MARK: - Time and bytes

    /// When `advance(to:)` must next be called (a byte due, a timer), if ever.
    public var nextDeadline: Int64? {
        var deadlines = outgoing.map(\.due)
        switch phase {
        case .idle(let nextBid): if let nextBid { deadlines.append(nextBid) }
        case .sending(let sending): deadlines.append(sending.deadline)
        case .receiving(let receiving): deadlines.append(receiving.deadline)
        case .pausing(let until, _): deadlines.append(until)
        }
        if receiver.isInsideBlock { deadlines.append(lastByteAt + timers.interCharacter) }
        if let sessionStart { deadlines.append(sessionStart + timers.overall) }
        return deadlines.min()
    }

    /// The bytes due by `now`, in order.
    public mutating func takeOutput(at now: Int64) -> [UInt8] {
        let due = outgoing.prefix { $0.due <= now }
        outgoing.removeFirst(due.count)
        return due.flatMap(\.bytes)
    }

    /// What `takeOutput` gave went on the wire at `now`: a pause before the next session runs
    /// from the last character sent ("before initiating the second or third session, the
    /// initiating device should pause a minimum of 100 milliseconds", p.114), not from when it
    /// was due.
    public mutating func wrote(at now: Int64) {
        guard case .pausing(let until, let next) = phase, outgoing.isEmpty else { return }
        phase = .pausing(until: max(until, now + timers.sessionPause), then: next)
    }

    public mutating func receive(_ bytes: [UInt8], at now: Int64) -> [DEXLinkEvent] {
        guard !bytes.isEmpty else { return [] }
        var events = expireInterCharacter(at: now)
        lastByteAt = now
        for token in receiver.receive(bytes) { events += handle(token, at: now) }
        return events
    }

    /// Runs the timers that have expired by `now`.
    public mutating func advance(to now: Int64) -> [DEXLinkEvent] {
        var events = expireInterCharacter(at: now)
        if let sessionStart, now >= sessionStart + timers.overall, !isIdle {
            return events + fail(at: now, "the session took longer than \(timers.overall / 1000) s")
        }
        switch phase {
        case .idle(let nextBid):
            if let nextBid, now >= nextBid { bid(at: now) }
        case .pausing(let until, let session):
            if now >= until { events += start(session, at: now) }
        case .sending(var sending):
            guard now >= sending.deadline else { break }
            if sending.afterWACK {
                sending.afterWACK = false
                enquire(&sending, at: now, after: 0)
                phase = .sending(sending)
            } else {
                events += retry(&sending, at: now, why: "no answer within \(timers.response) ms", afterSilence: true)
            }
        case .receiving(let receiving):
            if now >= receiving.deadline {
                events += fail(at: now, "the handheld fell silent for \(timers.inactivity) ms (Timer D)", in: receiving.session)
            }
        }
        return events
    }

    /// The port closed under the link (cable pulled, adapter gone): a session under way fails,
    /// and what was still to be sent is dropped (it belongs to the old connection, not the next).
    public mutating func disconnected(at now: Int64, reason: String) -> [DEXLinkEvent] {
        receiver = DEXFrameReceiver()
        outgoing.removeAll()
        guard !isIdle else { return [] }
        return fail(at: now, reason, quietly: true)
    }

    // MARK: - Tokens

    private mutating func handle(_ token: DEXToken, at now: Int64) -> [DEXLinkEvent] {
        switch phase {
        case .idle:
            guard token == .enq else { return [] }
            // The handheld starts: the machine is slave for the first handshake.
            beginSession(at: now, machineFirst: false)
            var receiving = Receiving(session: .firstHandshake, deadline: now + timers.inactivity)
            answerENQ(&receiving, at: now)
            phase = .receiving(receiving)
        case .pausing:
            return []
        case .sending(var sending):
            return handleAsSender(token, &sending, at: now)
        case .receiving(var receiving):
            return handleAsReceiver(token, &receiving, at: now)
        }
        return []
    }

    private mutating func handleAsSender(_ token: DEXToken, _ sending: inout Sending, at now: Int64) -> [DEXLinkEvent] {
        let expected = sending.next == -1 ? 0 : (sending.next + 1) % 2
        switch token {
        case .ack(let number) where number == expected:
            sending.next += 1
            sending.tries = 1
            if sending.next == sending.blocks.count {
                send([DEXByte.eot], at: now)
                return finishSending(sending.session, at: now)
            }
            send(sending.blocks[sending.next].bytes, at: now)
            sending.deadline = now + timers.turnaround + timers.response
            phase = .sending(sending)
            return []
        case .enq where sending.session == .firstHandshake && sending.next == -1:
            // Both bid at once: the handheld wins, as the machine is slave by default (§4.5.1).
            phase = .idle(nextBid: nil)
            return handle(.enq, at: now)
        case .wack:
            sending.afterWACK = true
            sending.deadline = now + timers.afterWACK
            phase = .sending(sending)
            return []
        case .nak, .ack:
            let what = token == .nak ? "NAK" : "the other ACK"
            return retry(&sending, at: now, why: "\(what) for \(describe(sending))", afterSilence: false)
        default:
            return []
        }
    }

    private mutating func handleAsReceiver(_ token: DEXToken, _ receiving: inout Receiving, at now: Int64) -> [DEXLinkEvent] {
        // Timer D runs inside the session; before the handheld's ENQ the wait is the overall one,
        // which noise does not extend.
        if receiving.started || token == .enq { receiving.deadline = now + timers.inactivity }
        defer { if case .receiving = phase { phase = .receiving(receiving) } }
        switch token {
        case .enq where !receiving.started:
            answerENQ(&receiving, at: now)
        case .enq:
            // The sender did not hear the last answer: it is said again.
            send(receiving.lastReply, at: now)
        case .block(let block) where receiving.started && !receiving.hasLast:
            if let refusal = refusal(of: block, in: receiving.session) {
                return refuse(&receiving, at: now, refusal)
            }
            receiving.text += block.payload
            receiving.hasLast = block.isLast
            reply([DEXByte.dle, receiving.nextAck == 1 ? DEXByte.ack1 : DEXByte.ack0], &receiving, at: now)
            receiving.nextAck = 1 - receiving.nextAck
            if receiving.session == .firstHandshake, block.isLast, let handshake = DEXFirstHandshake(payload: receiving.text) {
                request = handshake
                return [.handshake(handshake, machineFirst: false)]
            }
        case .badBlock(let why) where receiving.started:
            return refuse(&receiving, at: now, why)
        case .eot where receiving.started:
            guard receiving.hasLast else {
                return fail(at: now, "the handheld ended the session (EOT) before its last block", in: receiving.session)
            }
            return finishReceiving(receiving, at: now)
        default:
            break
        }
        return []
    }

    // MARK: - Sessions

    private mutating func beginSession(at now: Int64, machineFirst: Bool) {
        sessionStart = now
        self.machineFirst = machineFirst
        request = nil
        audit = nil
        response = .ok
    }

    private mutating func bid(at now: Int64) {
        beginSession(at: now, machineFirst: true)
        let handshake = DEXFirstHandshake(communicationID: communicationID, operation: .send, revision: revision)
        request = handshake
        let block = DEXBlock(kind: .handshake, payload: handshake.payload, isLast: true)
        var sending = Sending(session: .firstHandshake, blocks: [block], deadline: now)
        enquire(&sending, at: now, after: 0)
        phase = .sending(sending)
    }

    /// The machine starts `session` as sender, or waits for the handheld to start it.
    private mutating func start(_ session: Session, at now: Int64) -> [DEXLinkEvent] {
        let blocks: [DEXBlock]
        switch session {
        case .secondHandshake:
            let answer = DEXSecondHandshake(response: response, communicationID: communicationID, revision: revision)
            blocks = [DEXBlock(kind: .handshake, payload: answer.payload, isLast: true)]
        case .data:
            guard let audit else { return fail(at: now, "no audit was prepared for the read", in: .data) }
            blocks = DEXBlock.dataBlocks(audit)
        case .firstHandshake:
            preconditionFailure("the first handshake is started by a bid or the handheld's ENQ")
        }
        var sending = Sending(session: session, blocks: blocks, deadline: now)
        enquire(&sending, at: now, after: 0)
        phase = .sending(sending)
        return []
    }

    private mutating func finishSending(_ session: Session, at now: Int64) -> [DEXLinkEvent] {
        switch session {
        case .firstHandshake:
            // The handheld answers with the second handshake, when it is ready.
            phase = .receiving(Receiving(session: .secondHandshake, deadline: now + timers.overall))
        case .secondHandshake:
            guard response == .ok, let request else {
                return end(
                    [.failed(stage: "second handshake", reason: "answered \(response.rawValue) (\(response.meaning)) to \(describe(request))")],
                    at: now)
            }
            if request.operation == .readAudit {
                // The pause runs from the EOT just queued.
                phase = .pausing(until: now + timers.turnaround + timers.sessionPause, then: .data)
            } else {
                phase = .receiving(Receiving(session: .data, deadline: now + timers.overall))
            }
        case .data:
            return end([.auditDelivered(text: audit ?? [])], at: now)
        }
        return []
    }

    private mutating func finishReceiving(_ receiving: Receiving, at now: Int64) -> [DEXLinkEvent] {
        switch receiving.session {
        case .firstHandshake:
            judge(request)
            phase = .pausing(until: now + timers.sessionPause, then: .secondHandshake)
        case .secondHandshake:
            guard let answer = DEXSecondHandshake(payload: receiving.text), answer.response == .ok else {
                let code = DEXSecondHandshake(payload: receiving.text).map { "\($0.response.rawValue) (\($0.response.meaning))" } ?? "?"
                return end([.failed(stage: "second handshake", reason: "the handheld answered \(code)")], at: now)
            }
            let handshake = DEXFirstHandshake(communicationID: answer.communicationID, operation: .send, revision: answer.revision)
            phase = .pausing(until: now + timers.sessionPause, then: .data)
            return [.handshake(handshake, machineFirst: true)]
        case .data:
            return end([.configurationReceived(text: receiving.text)], at: now)
        }
        return []
    }

    /// The second handshake's response code for the handheld's first handshake.
    private mutating func judge(_ request: DEXFirstHandshake?) {
        guard let request else { return response = .undefinedError }
        if !DEXFirstHandshake.isCommunicationID(request.communicationID) {
            response = .unrecognisedID
        } else if !DEXFirstHandshake.isRevision(request.revision) {
            response = .unsupportedRevision
        } else if request.operation == .readAudit {
            response = audit == nil ? .noData : .ok
        } else if request.operation == .send {
            response = .ok
        } else {
            response = .undefinedError
        }
    }

    // MARK: - Helpers

    /// Why `block` cannot be taken in `session`, if it cannot.
    private func refusal(of block: DEXBlock, in session: Session) -> String? {
        switch session {
        case .firstHandshake:
            guard block.kind == .handshake else { return "a data block where the first handshake was due" }
            return DEXFirstHandshake(payload: block.payload) == nil ? "a first handshake of \(block.payload.count) bytes (17 expected)" : nil
        case .secondHandshake:
            guard block.kind == .handshake else { return "a data block where the second handshake was due" }
            return DEXSecondHandshake(payload: block.payload) == nil ? "a second handshake the machine cannot read" : nil
        case .data:
            return block.kind == .data ? nil : "a handshake block inside the data transfer"
        }
    }

    private mutating func refuse(_ receiving: inout Receiving, at now: Int64, _ why: String) -> [DEXLinkEvent] {
        receiving.badBlocks += 1
        guard receiving.badBlocks <= timers.attempts * 3 else {
            return fail(at: now, "\(receiving.badBlocks) bad blocks (last: \(why))", in: receiving.session)
        }
        reply([DEXByte.nak], &receiving, at: now)
        return [.warning("\(receiving.session.name): NAK for \(why)")]
    }

    private mutating func answerENQ(_ receiving: inout Receiving, at now: Int64) {
        receiving.started = true
        receiving.nextAck = 1
        reply([DEXByte.dle, DEXByte.ack0], &receiving, at: now)
    }

    private mutating func reply(_ bytes: [UInt8], _ receiving: inout Receiving, at now: Int64) {
        receiving.lastReply = bytes
        send(bytes, at: now)
    }

    /// Sends ENQ to start a session or to ask again after a silence or a WACK.
    private mutating func enquire(_ sending: inout Sending, at now: Int64, after delay: Int64) {
        outgoing.append((now + delay, [DEXByte.enq]))
        sending.deadline = now + delay + timers.response
    }

    /// Another try at the ENQ or block: after a silence (Timer A) the receiver is asked for its
    /// last answer again with ENQ at once; after a NAK the block goes again, past the turnaround.
    private mutating func retry(_ sending: inout Sending, at now: Int64, why: String, afterSilence: Bool) -> [DEXLinkEvent] {
        // A bid nobody answers is no session: nobody is plugged in.
        let isBid = machineFirst && sending.session == .firstHandshake && sending.next == -1
        guard sending.tries < timers.attempts else {
            if isBid {
                sessionStart = nil
                phase = .idle(nextBid: now + timers.bidInterval)
                return []
            }
            return fail(at: now, "\(why) after \(sending.tries) tries", in: sending.session)
        }
        sending.tries += 1
        if afterSilence || sending.next == -1 {
            enquire(&sending, at: now, after: afterSilence ? 0 : timers.turnaround)
        } else {
            send(sending.blocks[sending.next].bytes, at: now)
            sending.deadline = now + timers.turnaround + timers.response
        }
        phase = .sending(sending)
        return isBid ? [] : [.warning("\(sending.session.name): \(why); try \(sending.tries) of \(timers.attempts)")]
    }

    private mutating func send(_ bytes: [UInt8], at now: Int64) {
        outgoing.append((now + timers.turnaround, bytes))
    }

    private mutating func expireInterCharacter(at now: Int64) -> [DEXLinkEvent] {
        guard receiver.isInsideBlock, now >= lastByteAt + timers.interCharacter, let token = receiver.abandonBlock() else { return [] }
        return handle(token, at: now)
    }

    private mutating func fail(at now: Int64, _ reason: String, in session: Session? = nil, quietly: Bool = false) -> [DEXLinkEvent] {
        let stage: String
        switch (session, phase) {
        case (let session?, _): stage = session.name
        case (nil, .sending(let sending)): stage = sending.session.name
        case (nil, .receiving(let receiving)): stage = receiving.session.name
        case (nil, .pausing(_, let next)): stage = "before the \(next.name)"
        case (nil, .idle): stage = "idle"
        }
        // EOT tells the handheld the session is over (nobody hears it when the cable is gone).
        if !quietly { send([DEXByte.eot], at: now) }
        return end([.failed(stage: stage, reason: reason)], at: now)
    }

    /// Back to vending. A machine that bids waits the overall bound before bidding again, so a
    /// telemeter left plugged in is not read over and over.
    private mutating func end(_ events: [DEXLinkEvent], at now: Int64) -> [DEXLinkEvent] {
        phase = .idle(nextBid: firstHandshakeSide == .machine ? now + timers.overall : nil)
        sessionStart = nil
        request = nil
        receiver = DEXFrameReceiver()
        return events
    }

    private func describe(_ sending: Sending) -> String {
        sending.next == -1 ? "ENQ" : "block \(sending.next + 1) of \(sending.blocks.count)"
    }

    private func describe(_ request: DEXFirstHandshake?) -> String {
        guard let request else { return "an unreadable first handshake" }
        return "\(request.communicationID) asking '\(String(decoding: [request.operationByte], as: UTF8.self))' at \(request.revision)"
    }
}
