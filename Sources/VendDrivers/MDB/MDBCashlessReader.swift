import MDB
import VendSettings
import VendingCore

/// A cashless reader (10h or 60h, levels 1–3; MDB §7) on the bus thread. It mirrors the
/// reader's state machine, turns what the reader says into the machine's inputs, and carries
/// out the machine's commands when the reader can take them. A vend's money is the reader's:
/// vendd only tells it how each approved vend ended, and never resets a reader that holds an
/// approval it has not heard the end of — a reset would make that vend a sale (§7.4).
final class MDBCashlessReader: MDBPeripheralDriver {
    let peripheral: MDBPeripheral
    private let settings: MDBCashlessSettings
    private let currency: Currency
    /// mdb.currency_code: a reader reporting another currency is refused.
    private let currencyNumeric: Int?
    private let mailbox: CardReaderMailbox
    private let emit: MDBEventHandler
    private let wantsAcceptance: () -> Bool

    /// Where the reader stands, as far as vendd can tell (§7.1).
    private enum Phase: Equatable {
        /// Not initialised since its last reset.
        case inactive
        /// Initialised, but reporting a currency other than the machine's: never enabled.
        case refused
        /// Enabled or disabled: waiting for a card (or, always idle, a selection).
        case waiting
        /// Session Idle since a BEGIN SESSION: the customer selects.
        case session(since: ContinuousClock.Instant)
        /// VEND REQUEST sent, APPROVED or DENIED awaited; `cancelledAt` once VEND CANCEL went out.
        case requesting(VendID, since: ContinuousClock.Instant, cancelledAt: ContinuousClock.Instant?, origin: VendOrigin)
        /// Approved: the machine vends and then says how it ended.
        case approved(VendID, origin: VendOrigin)
        /// VEND FAILURE acknowledged; the refund's result is awaited on POLL.
        case refunding(CardSettlement, since: ContinuousClock.Instant, origin: VendOrigin)
        /// SESSION COMPLETE sent, END SESSION awaited.
        case completing(since: ContinuousClock.Instant)
    }

    /// How a vend's session began, which decides how it ends (§7.4).
    private enum VendOrigin: Equatable {
        /// In a card session (BEGIN SESSION first): it stays open after the vend if the reader
        /// allows several vends per session.
        case cardSession
        /// Always idle, selection first: the reader goes from its vend to Session Idle, and the
        /// machine closes that session with SESSION COMPLETE (MDB 4.2 §7.4.4, examples #11, #13).
        case selectionFirst
    }

    private var phase = Phase.inactive
    private var config: ReaderConfig?
    private var scale: CashlessScale?
    private var identity: PeripheralIdentification?
    private var enabledFeatures = CashlessFeatures()
    /// READER ENABLE (true) or DISABLE (false) as last sent.
    private var applied: Bool?
    /// Settlements the machine asked for and the reader has not acknowledged, oldest first.
    private var settlements: [(settlement: CardSettlement, item: UInt16)] = []
    /// Vends the reader approved and then was reset before their settlement: sales to it.
    private var soldByReset: Set<VendID> = []
    /// Vends the reader was asked for and then reset or lost before it answered: it may have
    /// approved them, and nothing can tell. Settled as possibly charged.
    private var unresolvedByReset: Set<VendID> = []
    /// COMMAND OUT OF SEQUENCE came while the reader held a vend: the RESET it calls for waits
    /// until that vend is settled (a reset would make its approval a sale, §7.4).
    private var resetWhenSettled = false
    /// Vends whose approval may have been consumed while vendd was down (settlements given at start).
    private var settleBeforeResetPending: Bool
    /// The reader's own age check (`AgeVerification`): the age DRAVP last set (nil: off, as
    /// every reset leaves it), and whether a DRAVS is awaiting its answer on POLL.
    private var ageSet: UInt8?
    private var ageCheckAwaited = false

    /// MDB's cashless non-response time: 5 s, or the reader's own maximum response time if longer (§7.5).
    var nonResponseTime: Duration { max(.seconds(5), .seconds(Int(config?.maximumResponseTime ?? 0))) }
    private var expanded: Bool { enabledFeatures.contains(.money32) }
    private var name: String { settings.reader.description }

    init(
        settings: MDBCashlessSettings, currency: Currency, currencyNumeric: Int?, mailbox: CardReaderMailbox, emit: @escaping MDBEventHandler,
        wantsAcceptance: @escaping () -> Bool
    ) {
        self.settings = settings
        self.currency = currency
        self.currencyNumeric = currencyNumeric
        self.mailbox = mailbox
        self.emit = emit
        self.wantsAcceptance = wantsAcceptance
        peripheral = settings.reader == .first ? .cashless1 : .cashless2
        settleBeforeResetPending = mailbox.hasSettlements
    }

    let pollCommand: UInt8 = 2
    /// At most this many POLLs wait for one answer, besides the time limit.
    private static let pollsPerWait = 250
    /// The reader's Vend state as COMMAND OUT OF SEQUENCE reports it (§7.4, Z2).
    private static let vendState: UInt8 = 5

    func isJustReset(_ poll: [UInt8]) -> Bool { poll.first == 0x00 }

    var hasWorkInProgress: Bool {
        switch phase {
        case .requesting, .approved, .refunding: true
        default: !settlements.isEmpty
        }
    }

    // MARK: - Initialisation (§7.4, "VMC/reader initialisation sequence")

    func initialise(_ bus: MDBDeviceBus) throws(MDBFailure) {
        resetHappened()
        // A JUST RESET still waiting would end this sequence at the first POLL after it.
        if case .data(let bytes) = try bus.send(block(.poll)), !isJustReset(bytes) { _ = try handle(bytes, bus) }
        let readerConfig = try awaitResponse(to: .setupConfig(vmcLevel: 3), bus) { response -> ReaderConfig? in
            if case .readerConfig(let config) = response { config } else { nil }
        }
        config = readerConfig
        scale = CashlessScale(readerConfig, currency: currency)
        if let currencyNumeric, readerConfig.currency.iso4217Numeric != currencyNumeric {
            return try refuse(
                "\(name) reports \(readerConfig.currency), mdb.currency_code says ISO 4217 \(currencyNumeric) (\(currency.code)): it is not enabled and takes no card. Set the reader to the machine's currency (its provider's terminal settings), or correct mdb.currency_code",
                bus)
        }
        _ = try bus.send(block(.setupPrices(maximum: 0xFFFF, minimum: 0, currency: nil)))
        identity = try? awaitResponse(
            to: .requestID(manufacturer: "VDD", serialNumber: "000000000001", model: "vendd", softwareVersion: 0x0100), bus
        ) { response -> PeripheralIdentification? in
            if case .peripheralID(let identity) = response { identity } else { nil }
        }
        enabledFeatures = []
        if readerConfig.level >= 3, let offered = identity.map({ CashlessFeatures(rawValue: $0.features) }) {
            var wanted: CashlessFeatures = [.money32]
            if settings.selectionFirst { wanted.insert(.alwaysIdle) }
            let enable = offered.intersection(wanted)
            if !enable.isEmpty {
                _ = try bus.send(block(.featureEnable(enable)))
                enabledFeatures = enable
            }
            if enable.contains(.money32) {
                _ = try bus.send(block(.setupPrices(maximum: 0xFFFF_FFFF, minimum: 0, currency: MDBCurrencyCode(raw: readerConfig.currency.raw))))
            }
        }
        phase = .waiting
        try applyAcceptance(bus)
        let summary =
            "\(name): \(identity?.summary ?? "no identity"), level \(readerConfig.level), \(readerConfig.currency), scale \(readerConfig.scaleFactor)×10^-\(readerConfig.decimalPlaces), answers within \(readerConfig.maximumResponseTime) s, \(describe(readerConfig.options))\(enabledFeatures.contains(.alwaysIdle) ? ", selection first" : ", card first")\(expanded ? ", 32-bit money" : "")"
        emit(.notice(summary, isFault: false))
        mailbox.describe(summary)
        emit(
            .card(
                .cardReaderReady(
                    settings.reader,
                    CardReaderReadiness(
                        reader: settings.reader, selectionFirst: enabledFeatures.contains(.alwaysIdle), moneyUnit: scale?.minorUnitsPerUnit))
            ))
    }

    /// A reader the machine must not sell through: disabled, said loudly, polled for its resets.
    private func refuse(_ why: String, _ bus: MDBDeviceBus) throws(MDBFailure) {
        _ = try bus.send(block(.readerDisable))
        applied = false
        phase = .refused
        emit(.notice(why, isFault: true))
        mailbox.describe("refused: \(why)")
        emit(.card(.cardReaderReady(settings.reader, nil)))
    }

    private func describe(_ options: CashlessOptions) -> String {
        [
            options.contains(.canRefund) ? "refunds" : "cannot refund",
            options.contains(.multiVend) ? "multi-vend" : "one vend per session",
            options.contains(.cashSale) ? "counts cash sales" : nil,
        ].compactMap { $0 }.joined(separator: ", ")
    }

    /// Sends a command whose data comes now or on a later POLL (§7.3), within the non-response time.
    private func awaitResponse<T>(to command: CashlessCommand, _ bus: MDBDeviceBus, _ match: (CashlessResponse) -> T?) throws(MDBFailure) -> T {
        let sent = block(command)
        var answer = try bus.send(sent)
        let deadline = bus.timekeeper.now + nonResponseTime
        // Bounded by count as well: a POLL takes real time on a bus, none on a simulated one.
        for _ in 0..<Self.pollsPerWait where bus.timekeeper.now < deadline {
            if case .data(let bytes) = answer {
                let responses = try parse(bytes, sent)
                if let found = responses.lazy.compactMap(match).first { return found }
            }
            answer = try bus.send(block(.poll))
        }
        throw .noAnswer(sent)
    }

    // MARK: - Start-up settlement

    /// Settlements journaled before vendd stopped: told to the reader before anything resets it.
    var mustSettleBeforeReset: Bool { settleBeforeResetPending }

    /// Tells the reader how each vend it may still hold ended, then lets the master reset it.
    /// A reader that reset by itself (power cut) already counted its approvals as sales (§7.4).
    func settleBeforeReset(_ bus: MDBDeviceBus) throws(MDBFailure) {
        takeCommands(bus, atStart: true)
        settleBeforeResetPending = false
        let answer = try bus.send(block(.poll))
        if case .data(let bytes) = answer, bytes.first == 0x00 {
            for (settlement, _) in settlements {
                settled(settlement, Self.afterReset(settlement), why: "the reader had reset (an approval it held became a sale)")
            }
            settlements.removeAll()
            return
        }
        while let (settlement, item) = settlements.first {
            let verdict: (result: CardSettlementResult, why: String)
            do {
                verdict = try settleAtStart(settlement, item: item, bus)
            } catch {
                // VEND FAILURE may have reached it (the link lost, or its answer): its refund
                // made or not. Left to the reset, it would be the reader's sale.
                if !settlement.success {
                    settlements.removeFirst()
                    settled(settlement, .unknown(settlement.atStake), why: "no answer after VEND FAILURE went out (\(error))")
                }
                throw error
            }
            settlements.removeFirst()
            settled(settlement, verdict.result, why: verdict.why)
        }
    }

    /// What a reset left of a settlement not yet told: a sale is a sale; an approval seen is the
    /// reader's sale (its refund lost); a request never seen approved may have been (unknown).
    private static func afterReset(_ settlement: CardSettlement) -> CardSettlementResult {
        if settlement.success { return .asAsked }
        return settlement.amount.isZero ? .unknown(settlement.requested) : .refundLost(settlement.amount)
    }

    /// One settlement told to a reader whose state vendd does not know: it may hold the
    /// approval, or still the request (then VEND CANCEL), or have approved while vendd was down
    /// (then VEND FAILURE: nobody vended). Nothing charged only when the reader shows it.
    private func settleAtStart(
        _ settlement: CardSettlement, item: UInt16, _ bus: MDBDeviceBus
    ) throws(MDBFailure) -> (result: CardSettlementResult, why: String) {
        _ = try bus.send(block(settlement.success ? .vendSuccess(item: item) : .vendFailure))
        /// An approval collected now, the amount it charged (the reader's scale is not read yet).
        var collected: Money?
        var awaitingDenial = false
        /// A reply no reader level could read: an ACK after it proves nothing.
        var unreadable = false
        let deadline = bus.timekeeper.now + nonResponseTime
        for _ in 0..<Self.pollsPerWait where bus.timekeeper.now < deadline {
            let answer = try bus.sendOnce(block(.poll))
            guard case .data(let bytes) = answer else {
                // Silence: a refund in progress (§7.4). ACK: done, unless a denial is awaited.
                guard answer == .ack, !awaitingDenial else { continue }
                if settlement.success { return (.asAsked, "VEND SUCCESS acknowledged") }
                if unreadable { return (.unknown(collected ?? settlement.atStake), "the reader's answers could not be read") }
                return (.asAsked, "VEND FAILURE acknowledged: the reader refunds the card")
            }
            guard let responses = Self.parseWithoutItsLevel(bytes) else {
                unreadable = true
                continue
            }
            // Every message of the reply, in order (§7.3.1): an approval may follow the answer
            // to VEND FAILURE in the same reply.
            var verdict: (result: CardSettlementResult, why: String)?
            for response in responses {
                switch response {
                case .justReset:
                    return (Self.afterReset(settlement), "the reader reset while it was told (an approval it held became a sale)")
                case .vendApproved where !settlement.success:
                    // Approved while vendd was down: nobody vended. Refused, so it refunds.
                    collected = settlement.requested
                    _ = try bus.send(block(.vendFailure))
                    awaitingDenial = false
                    verdict = nil
                case .vendDenied:
                    verdict = (.asAsked, "denied: nothing charged")
                case .commandOutOfSequence(let state) where state == Self.vendState:
                    // Its request is still open: cancel it; DENIED or APPROVED follows.
                    _ = try bus.send(block(.vendCancel))
                    awaitingDenial = true
                case .commandOutOfSequence(let state?) where Self.statesHoldingNoVend.contains(state) && collected == nil:
                    verdict = (.asAsked, "the reader holds no vend (\(Self.describe(readerState: state))): nothing charged")
                case .commandOutOfSequence(let state):
                    verdict = (
                        Self.afterReset(settlement),
                        "COMMAND OUT OF SEQUENCE (\(state.map(Self.describe(readerState:)) ?? "no state reported")): whether it charged cannot be told"
                    )
                case .malfunction(let code) where code >> 4 == 0xC:
                    verdict = (.refundLost(collected ?? settlement.atStake), "refund failed: \(CashlessMalfunction.describe(code))")
                default: continue
                }
            }
            if let verdict { return verdict }
        }
        if settlement.success { return (.asAsked, "no answer within \(nonResponseTime): the sale stands") }
        return (.unknown(collected ?? settlement.atStake), "no answer within \(nonResponseTime): whether it charged cannot be told")
    }

    /// A reply read before the reader's SETUP says its level: the one reading that takes every
    /// byte (a level-1 COMMAND OUT OF SEQUENCE is one byte, two at levels 2 and 3; money 16 or 32 bits).
    private static func parseWithoutItsLevel(_ bytes: [UInt8]) -> [CashlessResponse]? {
        for (level, expanded) in [(UInt8(3), false), (3, true), (1, false)] {
            if let responses = try? CashlessResponse.parse(bytes, level: level, expanded: expanded) { return responses }
        }
        return nil
    }

    /// Reader states (§7.1, as COMMAND OUT OF SEQUENCE numbers them) in which it holds neither a
    /// vend request nor an approval: Disabled, Enabled, Session Idle.
    private static let statesHoldingNoVend: Set<UInt8> = [2, 3, 4]

    private static func describe(readerState: UInt8) -> String {
        let names: [UInt8: String] = [
            1: "Inactive", 2: "Disabled", 3: "Enabled", 4: "Session Idle", 5: "Vend", 6: "Revalue", 7: "Negative Vend",
        ]
        return "reader state \(readerState), \(names[readerState] ?? "unknown")"
    }

    // MARK: - Polling

    func tick(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        // Acceptance first: the machine enables the readers and may ask for a vend in the same
        // breath (a selection just after the change was paid); the vend must find them enabled.
        try applyAcceptance(bus)
        takeCommands(bus, atStart: false)
        if try settleDue(bus) { return true }
        if try checkTimers(bus) { return true }
        if resetWhenSettled, !holdsVend, settlements.isEmpty {
            resetWhenSettled = false
            emit(.notice("\(name): the vend it held is settled: RESET for its COMMAND OUT OF SEQUENCE", isFault: true))
            return try reset(bus)
        }
        if case .refunding(let settlement, _, let origin) = phase {
            // §7.4: ACK = refunded, MALFUNCTION Ch = refund failed, silence = still refunding.
            switch try bus.sendOnce(block(.poll)) {
            case .ack:
                settled(settlement, .asAsked, why: "refunded")
                afterVend(origin, bus)
            case .noAnswer: break
            case .data(let bytes): return try handle(bytes, bus)
            }
            return false
        }
        guard case .data(let bytes) = try bus.send(block(.poll)) else { return false }
        return try handle(bytes, bus)
    }

    /// A vend request or approval the reader holds, or a refund it is making.
    private var holdsVend: Bool {
        switch phase {
        case .requesting, .approved, .refunding: true
        default: false
        }
    }

    /// Takes the machine's commands. Settlements are kept until the reader can hear them.
    private func takeCommands(_ bus: MDBDeviceBus, atStart: Bool) {
        for command in mailbox.takeCommands() {
            switch command {
            case .settle(let settlement, let item):
                guard !settlements.contains(where: { $0.settlement.vend == settlement.vend }) else { continue }
                settlements.append((settlement, item))
            case .requestVend(let vend, let price, let item): if !atStart { request(vend, price: price, item: item, bus) }
            case .cancelVend(let vend): if !atStart { cancel(vend, bus) }
            case .endSession: if !atStart { completeSession(bus) }
            case .cashSale(let price, let item): if !atStart { reportCashSale(price, item: item, bus) }
            case .checkAge(let age): if !atStart { checkAge(age, bus) } else { emit(.card(.ageRefused(.verifierLost))) }
            case .cancelAgeCheck: if !atStart { cancelAgeCheck(bus) }
            }
        }
    }

    private func request(_ vend: VendID, price: Money, item: UInt16, _ bus: MDBDeviceBus) {
        let origin: VendOrigin
        switch phase {
        case .session: origin = .cardSession
        case .waiting where enabledFeatures.contains(.alwaysIdle) && applied == true && !resetWhenSettled: origin = .selectionFirst
        default:
            emit(.notice("\(name) cannot take a vend now (\(phaseDescription)): \(vend) not requested", isFault: false))
            return emit(.card(.cardVendNotSent(vend)))
        }
        guard let scaled = scale?.scaled(price, width: expanded ? 4 : 2) else {
            emit(
                .notice(
                    "\(name): \(price) is not a whole number of the reader's money units: \(vend) not requested; check the reader's scale factor",
                    isFault: true))
            return emit(.card(.cardVendNotSent(vend)))
        }
        let sent = block(.vendRequest(price: scaled, item: item, expanded: expanded))
        phase = .requesting(vend, since: bus.timekeeper.now, cancelledAt: nil, origin: origin)
        // A VEND REQUEST ends the reader's age check: it goes to payment (senvend/mdb).
        if ageCheckAwaited {
            ageCheckAwaited = false
            emit(.card(.ageRefused(.verifierLost)))
        }
        do {
            // A reset the answer calls for waits for the vend (see `resetWhenSettled`).
            if case .data(let bytes) = try bus.send(sent), try handle(bytes, bus) { resetWhenSettled = true }
        } catch {
            // Unanswered: the approval wait and its VEND CANCEL settle it.
            emit(.notice("\(name): VEND REQUEST for \(vend): \(error)", isFault: true))
        }
    }

    private func cancel(_ vend: VendID, _ bus: MDBDeviceBus) {
        guard case .requesting(vend, let since, nil, let origin) = phase else { return }
        phase = .requesting(vend, since: since, cancelledAt: bus.timekeeper.now, origin: origin)
        _ = try? bus.send(block(.vendCancel))
    }

    private func completeSession(_ bus: MDBDeviceBus) {
        guard case .session = phase else { return }
        phase = .completing(since: bus.timekeeper.now)
        _ = try? bus.send(block(.sessionComplete))
    }

    /// CASH SALE (§7.4, option b3), only outside a vend so that it is never out of sequence.
    private func reportCashSale(_ price: Money, item: UInt16, _ bus: MDBDeviceBus) {
        guard config?.options.contains(.cashSale) == true, phase == .waiting || isInSessionIdle,
            let scaled = scale?.scaled(price, width: expanded ? 4 : 2)
        else { return }
        let currency = expanded ? config.map { MDBCurrencyCode(raw: $0.currency.raw) } : nil
        _ = try? bus.send(block(.cashSale(price: scaled, item: item, currency: currency)))
    }

    private var isInSessionIdle: Bool { if case .session = phase { true } else { false } }

    // MARK: - Age verification

    /// DRAVP when the reader checks for another age, then DRAVS: the reader prompts the customer
    /// and answers on a later POLL (`ageChecked`). Only while no vend is under way.
    private func checkAge(_ age: Int, _ bus: MDBDeviceBus) {
        guard phase == .waiting || isInSessionIdle, let age = UInt8(exactly: age), age > 0, age < 0xFF else {
            emit(.notice("\(name) cannot check an age now (\(phaseDescription))", isFault: false))
            return emit(.card(.ageRefused(.verifierLost)))
        }
        do {
            if ageSet != age {
                ageSet = nil
                try sendAgeVerification(.ageVerificationAge(age), bus)
                ageSet = age
            }
            ageCheckAwaited = true
            try sendAgeVerification(.ageVerificationCheck, bus)
        } catch {
            emit(.notice("\(name): the age check could not be asked for: \(error)", isFault: true))
            ageCheckAwaited = false
            emit(.card(.ageRefused(.verifierLost)))
        }
    }

    /// A reader may answer at once rather than ACK and answer on POLL (senvend/mdb's first way).
    private func sendAgeVerification(_ command: CashlessCommand, _ bus: MDBDeviceBus) throws(MDBFailure) {
        if case .data(let bytes) = try bus.send(block(command)), try handle(bytes, bus) { resetWhenSettled = true }
    }

    /// DRAVP 00h ("age off") stops the reader's prompt; the next check sets its age again.
    private func cancelAgeCheck(_ bus: MDBDeviceBus) {
        guard ageCheckAwaited else { return }
        ageCheckAwaited = false
        ageSet = nil
        _ = try? bus.send(block(.ageVerificationAge(0)))
    }

    /// A diagnostic response: the answer to DRAVP or DRAVS, or a reader's own data.
    private func diagnostic(_ data: [UInt8]) {
        switch AgeVerification.reply(diagnostic: data) {
        case .ageSet(let status)?:
            if status != 0 { emit(.notice("\(name): DRAVP answered with status \(Hex.encode([status]))", isFault: false)) }
        case .checked(let outcome)?:
            guard ageCheckAwaited else {
                return emit(.notice("\(name): an age check answered that vendd no longer waits for: ignored", isFault: false))
            }
            ageCheckAwaited = false
            switch outcome {
            case .oldEnough: emit(.card(.ageVerified))
            case .tooYoung: emit(.card(.ageRefused(.tooYoung)))
            case .noAge: emit(.card(.ageRefused(.noAge)))
            }
        case nil:
            emit(.notice("\(name): unrequested diagnostic data \(Hex.encode(data))", isFault: false))
        }
    }

    /// The machine's settlements, in order, when the reader can hear them. True: the reader
    /// must be reset.
    private func settleDue(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        while let (settlement, item) = settlements.first {
            if soldByReset.remove(settlement.vend) != nil {
                settlements.removeFirst()
                settled(settlement, Self.afterReset(settlement), why: "the reader was reset after approving it: it counted the vend as a sale")
                continue
            }
            if unresolvedByReset.remove(settlement.vend) != nil {
                settlements.removeFirst()
                settled(settlement, .unknown(settlement.atStake), why: "the reader was reset or lost before it answered the VEND REQUEST")
                continue
            }
            switch phase {
            case .approved(settlement.vend, let origin):
                // Only to a reader a POLL has just shown still in its vend: one that reset
                // meanwhile took the vend for a sale and would ignore the settlement.
                if case .data(let bytes) = try bus.send(block(.poll)), try handle(bytes, bus) { return true }
                guard case .approved(settlement.vend, _) = phase else { continue }
                settlements.removeFirst()
                // The vend is kept as it stands once the command is out: a link lost before the
                // answer leaves a sale sold (an approval still held is one at the reader's reset)
                // and a refund awaited, never the settlement forgotten.
                if settlement.success {
                    settled(settlement, .asAsked, why: "VEND SUCCESS sent")
                    phase = .session(since: bus.timekeeper.now)
                    _ = try bus.send(block(.vendSuccess(item: item)))
                    afterVend(origin, bus)
                } else {
                    phase = .refunding(settlement, since: bus.timekeeper.now, origin: origin)
                    do {
                        _ = try bus.send(block(.vendFailure))
                    } catch {
                        // Unheard or its ACK lost: a POLL's ACK would not tell a refund made from
                        // an approval still held.
                        if case .noAnswer = error {
                            settled(settlement, .unknown(settlement.atStake), why: "no answer to VEND FAILURE")
                            afterVend(origin, bus)
                        }
                        throw error
                    }
                }
                return false
            case .requesting(settlement.vend, _, nil, _):
                // The machine gave up before the approval: cancel; DENIED or APPROVED will follow.
                cancel(settlement.vend, bus)
                return false
            case .requesting(settlement.vend, _, _, _), .refunding:
                return false
            default:
                settlements.removeFirst()
                settled(settlement, .asAsked, why: "the reader holds no vend for it: nothing charged")
            }
        }
        return false
    }

    /// The reader's own deadlines (§7.5): approval within its maximum response time, END
    /// SESSION within the non-response time, a refund's result, an idle session.
    private func checkTimers(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        let now = bus.timekeeper.now
        switch phase {
        case .requesting(let vend, let since, nil, _) where now - since > nonResponseTime + .seconds(1):
            emit(.notice("\(name): no approval for \(vend) within \(nonResponseTime): VEND CANCEL", isFault: false))
            cancel(vend, bus)
        case .requesting(let vend, _, let cancelledAt?, _) where now - cancelledAt > nonResponseTime:
            emit(.notice("\(name): \(vend) neither approved nor denied after VEND CANCEL: RESET", isFault: true))
            return try reset(bus)
        case .refunding(let settlement, let since, let origin) where now - since > nonResponseTime:
            settled(settlement, .unknown(settlement.atStake), why: "VEND FAILURE acknowledged, no refund result within \(nonResponseTime)")
            afterVend(origin, bus)
        case .completing(let since) where now - since > nonResponseTime:
            emit(.notice("\(name): no END SESSION within \(nonResponseTime) of SESSION COMPLETE: RESET, as MDB requires", isFault: true))
            return try reset(bus)
        case .session(let since) where now - since > settings.sessionTimeout:
            emit(.notice("\(name): session idle for \(settings.sessionTimeout): SESSION COMPLETE", isFault: false))
            completeSession(bus)
        default: break
        }
        return false
    }

    /// After a vend's settlement or denial the reader is in Session Idle: a selection-first
    /// session is closed at once, a card session after one vend unless the reader allows more.
    private func afterVend(_ origin: VendOrigin, _ bus: MDBDeviceBus) {
        phase = .session(since: bus.timekeeper.now)
        if origin == .selectionFirst || config?.options.contains(.multiVend) != true { completeSession(bus) }
    }

    /// What the reader said, in order (§7.3.1). True when it reset (or must be reset now).
    private func handle(_ bytes: [UInt8], _ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        for response in try parse(bytes, block(.poll)) {
            switch response {
            case .justReset:
                return true
            case .beginSession(let session):
                beginSession(session, bus)
            case .sessionCancelRequest:
                emit(.notice("\(name): the customer cancelled the session (SESSION CANCEL REQUEST)", isFault: false))
                if phase == .waiting { phase = .session(since: bus.timekeeper.now) }
                // In a vend: its settlement ends the session.
                completeSession(bus)
            case .vendApproved(let amount):
                try approved(amount, bus)
            case .vendDenied:
                denied(bus)
            case .endSession:
                if holdsVend { continue }
                phase = .waiting
                applied = nil
                emit(.card(.cardSessionEnded(settings.reader)))
            case .cancelled:
                phase = .waiting
            case .peripheralID(let identity):
                self.identity = identity
            case .readerConfig(let config):
                self.config = config
            case .malfunction(let code):
                if case .refunding(let settlement, _, let origin) = phase, code >> 4 == 0xC {
                    settled(settlement, .refundLost(settlement.amount), why: CashlessMalfunction.describe(code))
                    afterVend(origin, bus)
                } else {
                    emit(.notice("\(name): \(CashlessMalfunction.describe(code))", isFault: CashlessMalfunction.isDisabling(code)))
                }
            case .commandOutOfSequence(let state):
                if try outOfSequence(state, bus) { return true }
            case .displayRequest(_, let text):
                emit(.notice("\(name) says: \(String(decoding: text, as: UTF8.self))", isFault: false))
            case .diagnostic(let data):
                diagnostic(data)
            case .revalueApproved, .revalueDenied, .revalueLimit, .timeDateRequest, .dataEntryRequest, .dataEntryCancel:
                // Never asked for: vendd does not revalue, offers no keypad and enables no such feature.
                emit(.notice("\(name): unrequested \(response)", isFault: false))
            }
        }
        return false
    }

    /// COMMAND OUT OF SEQUENCE is always answered by a RESET and a full initialisation (§7.4),
    /// but not over a vend the reader holds: a reset would make its approval a sale. That vend
    /// is settled first (a request still open is cancelled). True: reset now.
    private func outOfSequence(_ state: UInt8?, _ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        let reported = state.map(Self.describe(readerState:)) ?? "no reader state reported"
        if case .requesting(let vend, _, _, let origin) = phase, let state, Self.statesHoldingNoVend.contains(state) {
            // The reader shows it holds no request: nothing was charged for it.
            phase = origin == .cardSession ? .session(since: bus.timekeeper.now) : .waiting
            vendEndedWithoutApproval(vend)
        }
        guard holdsVend else {
            emit(.notice("\(name): COMMAND OUT OF SEQUENCE (\(reported), vendd's \(phaseDescription)): RESET and initialise again", isFault: true))
            return try reset(bus)
        }
        emit(
            .notice(
                "\(name): COMMAND OUT OF SEQUENCE (\(reported), vendd's \(phaseDescription)): the vend is settled first, then RESET", isFault: true))
        resetWhenSettled = true
        if case .requesting(let vend, _, nil, _) = phase { cancel(vend, bus) }
        return false
    }

    /// The phase in words, for the technician's log.
    private var phaseDescription: String {
        switch phase {
        case .inactive: "not initialised"
        case .refused: "refused"
        case .waiting: "waiting for a card"
        case .session: "in a card session"
        case .requesting(let vend, _, let cancelledAt, _): "\(vend) awaiting its approval\(cancelledAt == nil ? "" : ", VEND CANCEL sent")"
        case .approved(let vend, _): "\(vend) approved, not settled"
        case .refunding(let settlement, _, _): "\(settlement.vend) refunding"
        case .completing: "SESSION COMPLETE sent"
        }
    }

    private func beginSession(_ session: BeginSession, _ bus: MDBDeviceBus) {
        let funds = session.funds.flatMap { scale?.money($0) }
        let media: CardMedia = session.isFreeVend ? .freeVend : session.isTestMedia ? .test : .normal
        if case .requesting = phase {
            // Always idle: the reader opened a session for the vend requested; the vend goes on.
        } else {
            phase = .session(since: bus.timekeeper.now)
        }
        emit(.card(.cardSessionBegan(settings.reader, funds: funds, media: media, terms: Self.priceTerms(of: session))))
    }

    /// The card's prices from BEGIN SESSION's payment type (Z8, low six bits) and payment data
    /// (Z9 high, Z10 low), MDB 4.2 §7.4.4 p.7•15 (7•16 in expanded currency mode, Z10–Z12). A
    /// scheme vendd does not know, a percentage above 100 (64h) or a level-1 reader (no Z8) gets
    /// the normal prices, as the spec says for what the VMC does not know.
    static func priceTerms(of session: BeginSession) -> CardPriceTerms {
        guard let type = session.paymentType, let data = session.paymentData else { return .standard }
        let high = UInt8(data >> 8)
        let low = UInt8(data & 0xFF)
        switch type & 0x3F {
        case 1: return .priceList(userGroup: high, list: low)
        case 2: return .discountGroup(userGroup: high, group: low)
        case 3 where low <= 100: return .discount(percent: low)
        case 4 where low <= 100: return .surcharge(percent: low)
        default: return .standard
        }
    }

    private func approved(_ amount: UInt32?, _ bus: MDBDeviceBus) throws(MDBFailure) {
        guard case .requesting(let vend, _, _, let origin) = phase else {
            // An approval nobody is waiting for: refused at once, so the reader refunds it.
            emit(.notice("\(name): VEND APPROVED with no vend requested: VEND FAILURE", isFault: true))
            _ = try bus.send(block(.vendFailure))
            return
        }
        phase = .approved(vend, origin: origin)
        emit(.card(.cardVendApproved(vend, amount: amount.flatMap { scale?.money($0) })))
    }

    private func denied(_ bus: MDBDeviceBus) {
        guard case .requesting(let vend, _, _, let origin) = phase else { return }
        phase = .session(since: bus.timekeeper.now)
        vendEndedWithoutApproval(vend)
        if origin == .selectionFirst { completeSession(bus) }
    }

    /// Denied (VEND DENIED, also the answer to VEND CANCEL), or shown held by no reader state:
    /// nothing was charged.
    private func vendEndedWithoutApproval(_ vend: VendID) {
        if let index = settlements.firstIndex(where: { $0.settlement.vend == vend }) {
            let (settlement, _) = settlements.remove(at: index)
            settled(settlement, .asAsked, why: "denied: nothing charged")
        } else {
            emit(.card(.cardVendDenied(vend)))
        }
    }

    private func settled(_ settlement: CardSettlement, _ result: CardSettlementResult, why: String) {
        let lost: Bool
        if case .asAsked = result { lost = false } else { lost = !settlement.success }
        emit(.notice("\(name): \(settlement.vend) settled as \(settlement.success ? "sold" : "not sold"): \(why)", isFault: lost))
        emit(.card(.cardSettlementAnswered(settlement.vend, result)))
    }

    // MARK: - Resets

    /// RESET now; the master initialises the reader again.
    private func reset(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        _ = try bus.send(block(.reset))
        return true
    }

    /// The reader reset, or is about to be: what it held ends as a reset ends it (§7.4): an
    /// approval is a sale, a request unanswered may have been approved, a refund under way may
    /// not have been made.
    private func resetHappened() {
        resetWhenSettled = false
        // A reset ends the reader's age check and turns it off (senvend/mdb).
        ageSet = nil
        if ageCheckAwaited {
            ageCheckAwaited = false
            emit(.card(.ageRefused(.verifierLost)))
        }
        switch phase {
        case .approved(let vend, _): soldByReset.insert(vend)
        case .requesting(let vend, _, _, _):
            if let index = settlements.firstIndex(where: { $0.settlement.vend == vend }) {
                let (settlement, _) = settlements.remove(at: index)
                settled(settlement, .unknown(settlement.atStake), why: "the reader was reset or lost before it answered the VEND REQUEST")
            } else {
                unresolvedByReset.insert(vend)
                emit(.card(.cardVendUnresolved(vend)))
            }
        case .refunding(let settlement, _, _):
            settled(settlement, .unknown(settlement.atStake), why: "VEND FAILURE acknowledged, the reader reset before its refund's result")
        case .inactive, .refused, .waiting, .session, .completing: break
        }
        // Settlements not yet told: an approval is a sale to the reader now, a request may be.
        for (settlement, _) in settlements {
            if settlement.amount.isZero { unresolvedByReset.insert(settlement.vend) } else { soldByReset.insert(settlement.vend) }
        }
        guard phase != .inactive else { return }
        phase = .inactive
        applied = nil
        emit(.card(.cardReaderReady(settings.reader, nil)))
        mailbox.describe("\(name): initialising")
    }

    func lost() {
        resetHappened()
        mailbox.describe("\(name): not answering")
    }

    func stillOffline(_ now: ContinuousClock.Instant) {}

    // MARK: - Acceptance

    private func applyAcceptance(_ bus: MDBDeviceBus) throws(MDBFailure) {
        guard phase == .waiting else { return }
        let wanted = mailbox.accepting && wantsAcceptance()
        guard applied != wanted else { return }
        _ = try bus.send(block(wanted ? .readerEnable : .readerDisable))
        applied = wanted
    }

    // MARK: - Wire

    private func block(_ command: CashlessCommand) -> MDBBlock { command.block(for: peripheral) }

    private func parse(_ bytes: [UInt8], _ sent: MDBBlock) throws(MDBFailure) -> [CashlessResponse] {
        do {
            return try CashlessResponse.parse(bytes, level: config?.level ?? 1, expanded: expanded)
        } catch {
            throw .badAnswer(sent, error)
        }
    }
}
