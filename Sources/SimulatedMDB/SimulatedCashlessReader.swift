import MDB

/// A cashless reader (card or phone) written from MDB §7, at 10h or 60h, levels 1–3, as a bank
/// would answer: its state machine (Inactive → Disabled → Enabled → Session Idle → Vend), sessions
/// started by a card (`presentCard`) or, with "always idle", by a selection; approval delayed by
/// a number of POLLs; and the faults a VMC must survive. Its own books (`charged`, `refunded`)
/// are what a bank would settle: a test compares them with the machine's.
///
/// It also checks customers' ages itself ("embedded age verification", senvend/mdb
/// age_verification.md): see `requiredAge`, `presentID(age:)` and the extension at the end.
public final class SimulatedCashlessReader: SimulatedPeripheral {
    public let address: MDBPeripheral

    /// The reader's states (§7.1), numbered as COMMAND OUT OF SEQUENCE reports them.
    public enum State: UInt8, Sendable {
        case inactive = 1, disabled, enabled, sessionIdle, vend, revalue, negativeVend
    }

    public struct Faults: Sendable, Equatable {
        public var silent = false
        /// The next VEND REQUEST is answered after this many POLLs (an online authorisation).
        public var approvalPolls = 0
        /// The next VEND REQUEST is denied.
        public var deny = false
        /// END SESSION is never sent after SESSION COMPLETE.
        public var loseEndSession = false
        /// The next VEND FAILURE's refund fails (MALFUNCTION C0h: the customer's funds are lost).
        public var refundFails = false
        /// VEND FAILURE is lost on the bus (noise): no answer, and the approval is still held.
        public var vendFailureUnheard = false
        /// The next VEND CANCEL crosses an approval: the bank said yes as the cancel arrived, so
        /// the reader answers VEND APPROVED (and charges) instead of VEND DENIED.
        public var approveOnCancel = false
        /// The next approval comes in one reply with COMMAND OUT OF SEQUENCE after it (a
        /// multi-message reply, §7.3.1: the VMC must serve both, in order).
        public var outOfSequenceAfterApproval = false
        /// The next age verification answer (to DRAVP, or to DRAVS once the customer has acted)
        /// waits this many more POLLs: SENVEND's reader "might not" answer "on the first POLL"
        /// (senvend/mdb age_verification.md, IMPORTANT NOTICE). Those POLLs get what else is due,
        /// or a plain ACK.
        public var ageAnswerPolls = 0
        /// The next DRAVS answer is lost once on the bus (noise): the POLL that carries it gets
        /// no answer (a bad CHK, which the interface reports like silence), and the reader, whose
        /// data was not ACKed, sends the same block again on the next POLL (MDB's rule for data
        /// not ACKed, as recalled: the 4.3 text is not at hand).
        public var loseAgeAnswer = false
        public init() {}
    }

    public var faults = Faults()
    public var config: ReaderConfig
    public var offeredFeatures: CashlessFeatures
    public var identity = PeripheralIdentification(
        manufacturer: "VSM", serialNumber: "000000001010", model: "SIM-READER",
        softwareVersion: 0x0100, features: 0)
    public private(set) var state = State.inactive
    public private(set) var enabledFeatures = CashlessFeatures()
    public private(set) var vmcLevel: UInt8 = 1
    /// Settled with the bank: each charge, and each refund of one.
    public private(set) var charged: [UInt32] = []
    public private(set) var refunded: [UInt32] = []
    /// CASH SALEs the machine reported.
    public private(set) var cashSales: [UInt32] = []
    /// The price of each VEND REQUEST, as the VMC asked it.
    public private(set) var requested: [UInt32] = []

    /// Whether this reader answers DRAVP and DRAVS (embedded age verification). A reader that
    /// does not ignores them, as any EXPANSION it does not support (no answer, §1.3.2).
    public var supportsAgeVerification = true
    /// What Z4 Z5 of a DRAVS answer say when the customer is old enough: the DCM5's `1E 10` by
    /// default; SENVEND's own trace sends `9F 10` (senvend/mdb age_verification.md, raw bytes).
    public var approvedStatus = AgeStatus.approved
    /// The age set by the last DRAVP, in years; nil while age verification is off: after every
    /// power-up or RESET, and after a DRAVP with 00h ("Age Off") or FFh ("Age Supported, will be
    /// switched on"), until a DRAVP with another age (senvend/mdb age_verification.md, NOTE).
    public private(set) var requiredAge: Int?
    /// A DRAVS was ACKed and the reader is prompting the customer: nothing answered yet.
    public private(set) var isAwaitingAgeVerification = false
    /// Y3 of every DRAVP received, in order, as sent (00h and FFh too).
    public private(set) var agesReceived: [UInt8] = []
    /// One entry per DRAVS received: the age in force when it came (nil: none set).
    public private(set) var verificationRequests: [Int?] = []
    /// How each verification ended, in order (an answer the reader decided is counted even if a
    /// RESET then drops it before a POLL carries it).
    public private(set) var verificationOutcomes: [AgeVerificationOutcome] = []
    /// Age answers decided and not yet given to the POLL queue, oldest first, each with the POLLs
    /// it still waits (`Faults.ageAnswerPolls`).
    private var ageOutbox: [(response: CashlessResponse, polls: Int)] = []

    private var queue: [CashlessResponse] = []
    private var funds: UInt32?
    /// A vend approved and not yet settled by SUCCESS or FAILURE.
    private var approved: UInt32?
    private var pendingRequest: (price: UInt32, polls: Int)?
    /// The session's card takes a percentage off (or adds one): this reader applies it to each
    /// price asked and approves what it charges (MDB 4.2 p.7•15, 7•29).
    private var adjustment: (percent: UInt32, discount: Bool)?

    public init(
        address: MDBPeripheral = .cashless1, level: UInt8 = 3, maximumResponseTime: UInt8 = 30,
        options: CashlessOptions = [.canRefund, .cashSale], features: CashlessFeatures = [.alwaysIdle]
    ) {
        self.address = address
        config = ReaderConfig(
            level: level, currency: MDBCurrencyCode(raw: 0x1410), scaleFactor: 10, decimalPlaces: 0,
            maximumResponseTime: maximumResponseTime, options: options)
        offeredFeatures = level >= 3 ? features : []
        busReset()
    }

    private var expanded: Bool { enabledFeatures.contains(.money32) }

    /// A customer taps a card with `funds` (scaled; nil: the reader does not say). At levels 2
    /// and 3 the card's payment type and data go with it (Z8, Z9–Z10: MDB 4.2 §7.4.4 p.7•15).
    public func presentCard(funds: UInt32?, paymentType: UInt8 = 0, paymentData: UInt16 = 0) {
        guard state == .enabled, !faults.silent else { return }
        self.funds = funds
        state = .sessionIdle
        let percent = UInt32(paymentData & 0xFF)
        adjustment =
            switch config.level >= 2 ? paymentType & 0x3F : 0 {
            case 3 where percent <= 100: (percent, true)
            case 4 where percent <= 100: (percent, false)
            default: nil
            }
        queue.append(
            .beginSession(
                BeginSession(
                    funds: funds, mediaID: config.level >= 2 ? 0x0000_0042 : nil,
                    paymentType: config.level >= 2 ? paymentType : nil, paymentData: config.level >= 2 ? paymentData : nil)))
    }

    /// What this reader takes for a price asked: the card's percentage applied, to the scaled
    /// unit below (a reader's own rounding; the machine books what it approves).
    private func charge(for price: UInt32) -> UInt32 {
        guard let adjustment else { return price }
        return adjustment.discount ? price * (100 - adjustment.percent) / 100 : price * (100 + adjustment.percent) / 100
    }

    /// The customer takes the card away (or presses the reader's cancel).
    public func removeCard() {
        guard state == .sessionIdle else { return }
        queue.append(.sessionCancelRequest)
    }

    /// Power cycle or watchdog: a vend approved and not settled counts as a success (§7.4).
    public func resetItself() { busReset() }

    /// The bank approves the vend requested now, and the MDB interface ACKs the reader's VEND
    /// APPROVED by itself (a Qibixx master does) while vendd is gone: charged, and nobody heard.
    public func approveUnheard() {
        guard state == .vend, let request = pendingRequest else { return }
        pendingRequest = nil
        let amount = charge(for: request.price)
        approved = amount
        charged.append(amount)
        funds = funds.map { $0 - amount }
    }

    public func busReset() {
        // RESET between APPROVED and SUCCESS is interpreted as a success (§7.4 VEND SUCCESS).
        approved = nil
        pendingRequest = nil
        // A reset ends the session and the card's funds with it.
        funds = nil
        adjustment = nil
        state = .inactive
        enabledFeatures = []
        vmcLevel = 1
        queue = [.justReset]
        // Every power-up or RESET: age verification off until a DRAVP with an age; a RESET aborts
        // the verification awaited (senvend/mdb age_verification.md, aborts, option 4).
        if isAwaitingAgeVerification { verificationOutcomes.append(.aborted(.reset)) }
        isAwaitingAgeVerification = false
        requiredAge = nil
        ageOutbox = []
    }

    public func respond(to block: MDBBlock) -> MDBAnswer {
        guard !faults.silent else { return .noAnswer }
        let sub = block.data.first
        switch (block.command, sub) {
        case (0, _):
            busReset()
            return .ack
        case (1, 0x00) where block.data.count == 5:
            vmcLevel = block.data[1]
            state = state == .inactive ? .disabled : state
            return data(.readerConfig(config))
        case (1, 0x01):
            return inOrder(state != .inactive)
        case (2, _):
            return poll()
        case (3, 0x00):
            let width = expanded ? 4 : 2
            guard block.data.count == 1 + width + 2 else { return .noAnswer }
            // Always idle: a VEND REQUEST is taken in Enabled too; the vend then ends in Session
            // Idle like any other, and the VMC closes that session (MDB 4.2 §7.4.4, examples #11, #13).
            let alwaysIdle = enabledFeatures.contains(.alwaysIdle) && state == .enabled
            guard state == .sessionIdle || alwaysIdle else { return outOfSequence() }
            let price = block.data[1...width].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            // The verification awaited is aborted: the reader goes to payment (senvend/mdb
            // age_verification.md, aborts, option 1), and answers nothing to the DRAVS.
            if isAwaitingAgeVerification {
                isAwaitingAgeVerification = false
                verificationOutcomes.append(.aborted(.vendRequest))
            }
            state = .vend
            requested.append(price)
            pendingRequest = (price, faults.approvalPolls)
            faults.approvalPolls = 0
            return .ack
        case (3, 0x01):
            guard state == .vend, let request = pendingRequest else { return outOfSequence() }
            pendingRequest = nil
            if faults.approveOnCancel {
                faults.approveOnCancel = false
                approve(request.price)
                return .ack
            }
            state = .sessionIdle
            queue.append(.vendDenied)
            return .ack
        case (3, 0x02):
            guard state == .vend, approved != nil else { return outOfSequence() }
            approved = nil
            state = .sessionIdle
            return .ack
        case (3, 0x03):
            guard !faults.vendFailureUnheard else { return .noAnswer }
            guard state == .vend, let amount = approved else { return outOfSequence() }
            approved = nil
            if faults.refundFails || !config.options.contains(.canRefund) {
                faults.refundFails = false
                queue.append(.malfunction(code: 0xC0))
            } else {
                refunded.append(amount)
            }
            state = .sessionIdle
            return .ack
        case (3, 0x04):
            guard state == .sessionIdle else { return outOfSequence() }
            state = .enabled
            funds = nil
            adjustment = nil
            if !faults.loseEndSession { queue.append(.endSession) }
            return .ack
        case (3, 0x05):
            guard config.options.contains(.cashSale) else { return outOfSequence() }
            let width = expanded ? 4 : 2
            cashSales.append(block.data.dropFirst().prefix(width).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            return .ack
        case (4, 0x00):
            if state == .enabled { state = .disabled }
            return inOrder(state != .inactive)
        case (4, 0x01):
            if state == .disabled { state = .enabled }
            return inOrder(state != .inactive)
        case (4, 0x02):
            guard state == .enabled else { return outOfSequence() }
            queue.append(.cancelled)
            return .ack
        case (7, 0x00) where block.data.count == 30:
            return data(
                .peripheralID(
                    PeripheralIdentification(
                        manufacturer: identity.manufacturer, serialNumber: identity.serialNumber,
                        model: identity.model, softwareVersion: identity.softwareVersion,
                        features: offeredFeatures.rawValue)))
        case (7, 0x04) where block.data.count == 5 && config.level >= 3:
            let bits = block.data[1...4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            enabledFeatures = CashlessFeatures(rawValue: bits).intersection(offeredFeatures)
            return .ack
        case (7, 0xFF) where supportsAgeVerification:
            return ageVerification(Array(block.data.dropFirst()))
        default:
            // Not supported at this level, or an option not offered: ignored (§1.3.2).
            return .noAnswer
        }
    }

    private func poll() -> MDBAnswer {
        if let request = pendingRequest {
            if request.polls > 0 {
                pendingRequest = (request.price, request.polls - 1)
            } else {
                pendingRequest = nil
                let affordable = funds.map { $0 >= charge(for: request.price) } ?? true
                if faults.deny || !affordable {
                    faults.deny = false
                    state = .sessionIdle
                    queue.append(.vendDenied)
                } else {
                    approve(request.price)
                }
            }
        }
        releaseAgeAnswer()
        // A diagnostic response (FF) takes the rest of its block (as `CashlessResponse.parse`
        // reads it), so it goes last: what was queued after it waits for the next POLL.
        let end = queue.firstIndex { if case .diagnostic = $0 { true } else { false } }.map { $0 + 1 } ?? queue.count
        guard end > 0 else { return .ack }
        let carried = queue[..<end]
        if faults.loseAgeAnswer, carried.contains(where: Self.isVerificationAnswer) {
            faults.loseAgeAnswer = false
            return .noAnswer
        }
        let answer = carried.flatMap { $0.bytes(level: config.level, expanded: expanded, vmcLevel: vmcLevel) }
        queue.removeFirst(end)
        return .data(answer)
    }

    private func approve(_ price: UInt32) {
        let amount = charge(for: price)
        approved = amount
        charged.append(amount)
        funds = funds.map { $0 - amount }
        queue.append(.vendApproved(amount: amount))
        if faults.outOfSequenceAfterApproval {
            faults.outOfSequenceAfterApproval = false
            queue.append(.commandOutOfSequence(readerState: config.level == 1 ? nil : State.vend.rawValue))
        }
    }

    /// The answer to a command that brings its data at once.
    private func data(_ response: CashlessResponse) -> MDBAnswer {
        .data(response.bytes(level: config.level, expanded: expanded, vmcLevel: vmcLevel))
    }

    private func inOrder(_ allowed: Bool) -> MDBAnswer { allowed ? .ack : outOfSequence() }

    /// The command is ACKed and ignored; the next POLL says so (§7.4).
    private func outOfSequence() -> MDBAnswer {
        queue.append(.commandOutOfSequence(readerState: config.level == 1 ? nil : state.rawValue))
        return .ack
    }
}

// MARK: - Embedded age verification

/// The reader checks the customer's ID or age card itself (embedded age verification: SENVEND's
/// integration notes, senvend/mdb age_verification.md, and the MDB 4.3 samples of an ICT DCM5).
/// Two EXPANSION DIAGNOSTICS commands (17 FF Y1 Y2 Y3 "tag"), each ACKed at once and answered by
/// a diagnostic response (FF …) on a later POLL, "not necessarily the first" (SENVEND supports
/// only that way):
/// - DRAVP `17 FF 05 06 Y3 "DRAVP"` sets the age Y3 in years (00h "Age Off", FFh "Age Supported,
///   will be switched on": both leave no age set); answered `FF 05 06 00 "DRAVP"`.
/// - DRAVS `17 FF 06 06 00 "DRAVS"` asks to verify the customer; the reader prompts them and,
///   once verified or not, answers `FF 06 07 Z4 Z5 "DRAVS"` (`AgeStatus`).
extension SimulatedCashlessReader {
    /// Z4 Z5 of a DRAVS answer. Bit 4 (10h) of Z4 set: old enough; Z5 = 10h: a valid card was
    /// read (DCM5 log: `00 00` invalid card, `0E 10` younger than the age set, `1E 10` at least
    /// that age; SENVEND's approval is `9F 10`).
    public struct AgeStatus: Sendable, Equatable {
        public var z4: UInt8
        public var z5: UInt8
        public init(z4: UInt8, z5: UInt8) {
            self.z4 = z4
            self.z5 = z5
        }

        public static let approved = AgeStatus(z4: 0x1E, z5: 0x10)
        /// A valid card, its holder younger than the age set.
        public static let tooYoung = AgeStatus(z4: 0x0E, z5: 0x10)
        /// No age could be read (an invalid card), or none was presented.
        public static let noAge = AgeStatus(z4: 0x00, z5: 0x00)
        /// SENVEND's approval in its raw trace.
        public static let senvendApproved = AgeStatus(z4: 0x9F, z5: 0x10)

        public var isOldEnough: Bool { z4 & 0x10 != 0 }
    }

    /// How a verification asked by DRAVS ended.
    public enum AgeVerificationOutcome: Sendable, Equatable, CustomStringConvertible {
        /// The ID showed at least the age set: answered `approvedStatus`.
        case approved
        /// The ID showed a younger age: answered `0E 10`.
        case tooYoung
        /// The card presented had no readable age: answered `00 00`.
        case noAgeRead
        /// A DRAVS came while no age was set: answered `00 00` at once, nobody prompted (this
        /// reader's choice, see `ageVerification(_:)`).
        case refusedWithoutAge
        case aborted(AgeVerificationAbort)

        public var description: String {
            switch self {
            case .approved: "approved"
            case .tooYoung: "too young"
            case .noAgeRead: "no age read"
            case .refusedWithoutAge: "refused: no age set"
            case .aborted(.vendRequest): "aborted by VEND REQUEST"
            case .aborted(.ageOff): "aborted by DRAVP 00h"
            case .aborted(.ageWillBeSwitchedOn): "aborted by DRAVP FFh"
            case .aborted(.reset): "aborted by RESET"
            case .aborted(.backButton): "back button: not approved"
            }
        }
    }

    /// SENVEND's five ways to abort a verification awaited (senvend/mdb age_verification.md,
    /// "Aborting A Requested Age Verification"). Only the back button is answered (`00 00`).
    public enum AgeVerificationAbort: Sendable, Equatable {
        /// A VEND REQUEST: the reader goes to payment; no DRAVS answer.
        case vendRequest
        /// DRAVP with age 00h ("Age Off"): the DRAVP answer only.
        case ageOff
        /// DRAVP with age FFh ("Age Supported, will be switched on"): the DRAVP answer only.
        case ageWillBeSwitchedOn
        /// RESET (or the reader's own power cycle): JUST RESET only.
        case reset
        /// The customer pressed the reader's back button: answered "not approved".
        case backButton
    }

    private static let dravp: [UInt8] = Array("DRAVP".utf8)
    private static let dravs: [UInt8] = Array("DRAVS".utf8)

    /// EXPANSION DIAGNOSTICS, `y` being Y1 onwards. Only DRAVP and DRAVS exactly as SENVEND's
    /// trace has them (Y2 = 06h, the tag, and Y3 = 00h for DRAVS) are understood: anything else
    /// is a diagnostic this reader does not have, ignored (no answer, §1.3.2).
    ///
    /// Choices where the sources are silent:
    /// - DRAVS while no age is set (none since the RESET, or reset by DRAVP 00h/FFh, after which
    ///   SENVEND requires a new DRAVP first): ACKed and answered "not approved" (`00 00`, no card
    ///   read) on the next POLL, without prompting anyone. A reader with no age to compare has
    ///   nothing to approve against: approving would sell a restricted product unchecked, and
    ///   staying silent would leave the VMC waiting for an answer that never comes.
    /// - DRAVS in Inactive (before SETUP) or during a vend or revalue: COMMAND OUT OF SEQUENCE, as
    ///   any command the reader's state does not take; SENVEND's flows send it before VEND REQUEST.
    /// - DRAVS while one is already awaited: the customer is already prompted; it is counted and
    ///   the one verification goes on (one answer).
    /// - DRAVP with another age (not 00h/FFh) while a verification is awaited: it goes on against
    ///   the new age ("the age specified in the last DRAVP command").
    /// - The back button's "not approved" is `00 00`: no card was read (the notes give no bytes).
    private func ageVerification(_ y: [UInt8]) -> MDBAnswer {
        guard y.count == 8, y[1] == 0x06 else { return .noAnswer }
        let tag = Array(y[3...])
        switch y[0] {
        case 0x05 where tag == Self.dravp:
            let age = y[2]
            agesReceived.append(age)
            if age == 0x00 || age == 0xFF {
                requiredAge = nil
                if isAwaitingAgeVerification {
                    isAwaitingAgeVerification = false
                    verificationOutcomes.append(.aborted(age == 0x00 ? .ageOff : .ageWillBeSwitchedOn))
                }
            } else {
                requiredAge = Int(age)
            }
            sendAgeAnswer(.diagnostic([0x05, 0x06, 0x00] + Self.dravp))
            return .ack
        case 0x06 where tag == Self.dravs && y[2] == 0x00:
            guard [.disabled, .enabled, .sessionIdle].contains(state) else { return outOfSequence() }
            verificationRequests.append(requiredAge)
            if requiredAge == nil {
                finishVerification(.refusedWithoutAge, .noAge)
            } else {
                isAwaitingAgeVerification = true
            }
            return .ack
        default:
            return .noAnswer
        }
    }

    /// The customer presents an ID showing `age`: approved if at least the age set, else too
    /// young. False (nothing happens) when the reader is not prompting for a verification.
    @discardableResult public func presentID(age: Int) -> Bool {
        guard isAwaitingAgeVerification, let requiredAge, !faults.silent else { return false }
        if age >= requiredAge {
            finishVerification(.approved, approvedStatus)
        } else {
            finishVerification(.tooYoung, .tooYoung)
        }
        return true
    }

    /// The customer presents a card from which no age can be read: answered `00 00`.
    @discardableResult public func presentIDWithoutAge() -> Bool {
        guard isAwaitingAgeVerification, !faults.silent else { return false }
        finishVerification(.noAgeRead, .noAge)
        return true
    }

    /// The customer presses the reader's back button on the age prompt: the reader answers the
    /// DRAVS "not approved" and goes back to idle (senvend/mdb age_verification.md, option 5).
    @discardableResult public func pressBack() -> Bool {
        guard isAwaitingAgeVerification, !faults.silent else { return false }
        finishVerification(.aborted(.backButton), .noAge)
        return true
    }

    private func finishVerification(_ outcome: AgeVerificationOutcome, _ status: AgeStatus) {
        isAwaitingAgeVerification = false
        verificationOutcomes.append(outcome)
        sendAgeAnswer(.diagnostic([0x06, 0x07, status.z4, status.z5] + Self.dravs))
    }

    private func sendAgeAnswer(_ response: CashlessResponse) {
        ageOutbox.append((response, faults.ageAnswerPolls))
        faults.ageAnswerPolls = 0
    }

    /// At a POLL: the oldest age answer decided goes to the POLL queue once its delay is over,
    /// one per POLL (a diagnostic response ends its block).
    private func releaseAgeAnswer() {
        guard let first = ageOutbox.first else { return }
        if first.polls > 0 {
            ageOutbox[0].polls -= 1
        } else {
            ageOutbox.removeFirst()
            queue.append(first.response)
        }
    }

    private static func isVerificationAnswer(_ response: CashlessResponse) -> Bool {
        if case .diagnostic(let data) = response, data.first == 0x06 { true } else { false }
    }
}
