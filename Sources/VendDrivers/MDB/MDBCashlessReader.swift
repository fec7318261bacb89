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
    private let mailbox: CardReaderMailbox
    private let emit: MDBEventHandler
    private let wantsAcceptance: () -> Bool

    /// Where the reader stands, as far as vendd can tell (§7.1).
    private enum Phase: Equatable {
        /// Not initialised since its last reset.
        case inactive
        /// Enabled or disabled: waiting for a card (or, always idle, a selection).
        case waiting
        /// Session Idle since a BEGIN SESSION: the customer selects.
        case session(since: ContinuousClock.Instant)
        /// VEND REQUEST sent, APPROVED or DENIED awaited; `cancelledAt` once VEND CANCEL went out.
        case requesting(VendID, since: ContinuousClock.Instant, cancelledAt: ContinuousClock.Instant?, inSession: Bool)
        /// Approved: the machine vends and then says how it ended.
        case approved(VendID, inSession: Bool)
        /// VEND FAILURE acknowledged; the refund's result is awaited on POLL.
        case refunding(CardSettlement, since: ContinuousClock.Instant, inSession: Bool)
        /// SESSION COMPLETE sent, END SESSION awaited.
        case completing(since: ContinuousClock.Instant)
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
    /// Vends whose approval may have been consumed while vendd was down (settlements given at start).
    private var settleBeforeResetPending: Bool

    /// MDB's cashless non-response time: 5 s, or the reader's own maximum response time if longer (§7.5).
    var nonResponseTime: Duration { max(.seconds(5), .seconds(Int(config?.maximumResponseTime ?? 0))) }
    private var expanded: Bool { enabledFeatures.contains(.money32) }
    private var name: String { settings.reader.description }

    init(
        settings: MDBCashlessSettings, currency: Currency, mailbox: CardReaderMailbox, emit: @escaping MDBEventHandler,
        wantsAcceptance: @escaping () -> Bool
    ) {
        self.settings = settings
        self.currency = currency
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
                .cardReaderReady(settings.reader, CardReaderReadiness(reader: settings.reader, selectionFirst: enabledFeatures.contains(.alwaysIdle)))
            ))
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
    /// A reader that reset by itself (power cut) already counted them as sales (§7.4).
    func settleBeforeReset(_ bus: MDBDeviceBus) throws(MDBFailure) {
        takeCommands(bus, atStart: true)
        settleBeforeResetPending = false
        let answer = try bus.send(block(.poll))
        if case .data(let bytes) = answer, bytes.first == 0x00 {
            for (settlement, _) in settlements {
                settled(settlement, refundLost: !settlement.success, why: "the reader had reset: it counted the vend as a sale")
            }
            settlements.removeAll()
            return
        }
        for (settlement, item) in settlements {
            let verdict = try settleAtStart(settlement, item: item, bus)
            settled(settlement, refundLost: verdict.lost, why: verdict.why)
        }
        settlements.removeAll()
    }

    /// One settlement told to a reader whose state vendd does not know: it may hold the
    /// approval, or still the request (then VEND CANCEL), or have approved while vendd was down
    /// (then VEND FAILURE: nobody vended).
    private func settleAtStart(_ settlement: CardSettlement, item: UInt16, _ bus: MDBDeviceBus) throws(MDBFailure) -> (lost: Bool, why: String) {
        _ = try bus.send(block(settlement.success ? .vendSuccess(item: item) : .vendFailure))
        var awaitingDenial = false
        let deadline = bus.timekeeper.now + nonResponseTime
        for _ in 0..<Self.pollsPerWait where bus.timekeeper.now < deadline {
            let answer = try bus.sendOnce(block(.poll))
            guard case .data(let bytes) = answer else {
                // Silence: a refund in progress (§7.4). ACK: done, unless a denial is awaited.
                if answer == .ack, !awaitingDenial {
                    return (false, settlement.success ? "VEND SUCCESS acknowledged" : "VEND FAILURE acknowledged: the reader refunds the card")
                }
                continue
            }
            for response in (try? CashlessResponse.parse(bytes, level: 3, expanded: false)) ?? [] {
                switch response {
                case .justReset: return (!settlement.success, "the reader had reset: it counted the vend as a sale")
                case .vendApproved:
                    _ = try bus.send(block(.vendFailure))
                    awaitingDenial = false
                case .vendDenied: return (false, "denied: nothing charged")
                case .commandOutOfSequence(let state) where state == Self.vendState:
                    // Its request is still open: cancel it; DENIED or APPROVED follows.
                    _ = try bus.send(block(.vendCancel))
                    awaitingDenial = true
                case .commandOutOfSequence(let state):
                    return (
                        false, "the reader held no approval for it (out of sequence, reader state \(state.map(String.init) ?? "?")): nothing charged"
                    )
                case .malfunction(let code) where code >> 4 == 0xC: return (true, "refund failed: \(CashlessMalfunction.describe(code))")
                default: continue
                }
            }
        }
        return (false, "no answer within \(nonResponseTime)")
    }

    // MARK: - Polling

    func tick(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        takeCommands(bus, atStart: false)
        if try settleDue(bus) { return true }
        if try checkTimers(bus) { return true }
        try applyAcceptance(bus)
        if case .refunding(let settlement, _, let inSession) = phase {
            // §7.4: ACK = refunded, MALFUNCTION Ch = refund failed, silence = still refunding.
            switch try bus.sendOnce(block(.poll)) {
            case .ack:
                settled(settlement, refundLost: false, why: "refunded")
                afterVend(inSession: inSession, bus)
            case .noAnswer: break
            case .data(let bytes): return try handle(bytes, bus)
            }
            return false
        }
        guard case .data(let bytes) = try bus.send(block(.poll)) else { return false }
        return try handle(bytes, bus)
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
            }
        }
    }

    private func request(_ vend: VendID, price: Money, item: UInt16, _ bus: MDBDeviceBus) {
        // The machine may have enabled the readers since this thread's last turn (its READER
        // ENABLE not sent yet): the reader hears it before the VEND REQUEST, not a denial.
        if phase == .waiting { try? applyAcceptance(bus) }
        let inSession: Bool
        switch phase {
        case .session: inSession = true
        case .waiting where enabledFeatures.contains(.alwaysIdle) && applied == true: inSession = false
        default:
            emit(.notice("\(name) cannot take a vend now (\(phase)): \(vend) denied", isFault: false))
            return emit(.card(.cardVendDenied(vend)))
        }
        guard let scaled = scale?.scaled(price, width: expanded ? 4 : 2) else {
            emit(
                .notice(
                    "\(name): \(price) is not a whole number of the reader's money units: \(vend) denied; check the reader's scale factor",
                    isFault: true))
            return emit(.card(.cardVendDenied(vend)))
        }
        let sent = block(.vendRequest(price: scaled, item: item, expanded: expanded))
        phase = .requesting(vend, since: bus.timekeeper.now, cancelledAt: nil, inSession: inSession)
        do {
            if case .data(let bytes) = try bus.send(sent) { _ = try handle(bytes, bus) }
        } catch {
            // Unanswered: the approval wait and its VEND CANCEL settle it.
            emit(.notice("\(name): VEND REQUEST for \(vend): \(error)", isFault: true))
        }
    }

    private func cancel(_ vend: VendID, _ bus: MDBDeviceBus) {
        guard case .requesting(vend, let since, nil, let inSession) = phase else { return }
        phase = .requesting(vend, since: since, cancelledAt: bus.timekeeper.now, inSession: inSession)
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

    /// The machine's settlements, in order, when the reader can hear them. True: the reader
    /// must be reset.
    private func settleDue(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        while let (settlement, item) = settlements.first {
            if soldByReset.remove(settlement.vend) != nil {
                settlements.removeFirst()
                settled(settlement, refundLost: !settlement.success, why: "the reader was reset after approving it: it counted the vend as a sale")
                continue
            }
            switch phase {
            case .approved(settlement.vend, let inSession):
                // Only to a reader a POLL has just shown still in its vend: one that reset
                // meanwhile took the vend for a sale and would ignore the settlement.
                if case .data(let bytes) = try bus.send(block(.poll)), try handle(bytes, bus) { return true }
                guard case .approved(settlement.vend, _) = phase else { continue }
                settlements.removeFirst()
                _ = try bus.send(block(settlement.success ? .vendSuccess(item: item) : .vendFailure))
                if settlement.success {
                    settled(settlement, refundLost: false, why: "VEND SUCCESS acknowledged")
                    afterVend(inSession: inSession, bus)
                } else {
                    phase = .refunding(settlement, since: bus.timekeeper.now, inSession: inSession)
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
                settled(settlement, refundLost: false, why: "the reader holds no approval for it: nothing charged")
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
        case .refunding(let settlement, let since, let inSession) where now - since > nonResponseTime:
            settled(settlement, refundLost: false, why: "VEND FAILURE acknowledged, no refund result within \(nonResponseTime)")
            afterVend(inSession: inSession, bus)
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

    /// After a vend's settlement: one vend per session unless the reader allows more.
    private func afterVend(inSession: Bool, _ bus: MDBDeviceBus) {
        guard inSession else { return phase = .waiting }
        phase = .session(since: bus.timekeeper.now)
        if config?.options.contains(.multiVend) != true { completeSession(bus) }
    }

    /// What the reader said, in order. True when it reset (or must be reset).
    private func handle(_ bytes: [UInt8], _ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        for response in try parse(bytes, block(.poll)) {
            switch response {
            case .justReset:
                return true
            case .beginSession(let session):
                beginSession(session, bus)
            case .sessionCancelRequest:
                emit(.notice("\(name): the customer cancelled the session", isFault: false))
                completeSession(bus)
            case .vendApproved(let amount):
                try approved(amount, bus)
            case .vendDenied:
                denied(bus)
            case .endSession:
                if case .refunding = phase { continue }
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
                if case .refunding(let settlement, _, let inSession) = phase, code >> 4 == 0xC {
                    settled(settlement, refundLost: true, why: CashlessMalfunction.describe(code))
                    afterVend(inSession: inSession, bus)
                } else {
                    emit(.notice("\(name): \(CashlessMalfunction.describe(code))", isFault: CashlessMalfunction.isDisabling(code)))
                }
            case .commandOutOfSequence(let state):
                // §7.4: always answered by a RESET and a full initialisation.
                emit(
                    .notice(
                        "\(name): COMMAND OUT OF SEQUENCE (reader state \(state.map(String.init) ?? "not reported"), vendd's \(phase)): RESET and initialise again",
                        isFault: true))
                return try reset(bus)
            case .displayRequest(_, let text):
                emit(.notice("\(name) says: \(String(decoding: text, as: UTF8.self))", isFault: false))
            case .diagnostic, .revalueApproved, .revalueDenied, .revalueLimit, .timeDateRequest, .dataEntryRequest, .dataEntryCancel:
                // Never asked for: vendd does not revalue, offers no keypad and enables no such feature.
                emit(.notice("\(name): unrequested \(response)", isFault: false))
            }
        }
        return false
    }

    private func beginSession(_ session: BeginSession, _ bus: MDBDeviceBus) {
        let funds = session.funds.flatMap { scale?.money($0) }
        let media: CardMedia = session.isFreeVend ? .freeVend : session.isTestMedia ? .test : .normal
        if case .requesting = phase {
            // Always idle: the reader opened a session for the vend requested; the vend goes on.
        } else {
            phase = .session(since: bus.timekeeper.now)
        }
        emit(.card(.cardSessionBegan(settings.reader, funds: funds, media: media)))
    }

    private func approved(_ amount: UInt32?, _ bus: MDBDeviceBus) throws(MDBFailure) {
        guard case .requesting(let vend, _, _, let inSession) = phase else {
            // An approval nobody is waiting for: refused at once, so the reader refunds it.
            emit(.notice("\(name): VEND APPROVED with no vend requested: VEND FAILURE", isFault: true))
            _ = try bus.send(block(.vendFailure))
            return
        }
        phase = .approved(vend, inSession: inSession)
        emit(.card(.cardVendApproved(vend, amount: amount.flatMap { scale?.money($0) })))
    }

    private func denied(_ bus: MDBDeviceBus) {
        guard case .requesting(let vend, _, _, let inSession) = phase else { return }
        phase = inSession ? .session(since: bus.timekeeper.now) : .waiting
        vendEndedWithoutApproval(vend)
    }

    /// Denied, cancelled or reset before its approval: nothing was charged.
    private func vendEndedWithoutApproval(_ vend: VendID) {
        if let index = settlements.firstIndex(where: { $0.settlement.vend == vend }) {
            let (settlement, _) = settlements.remove(at: index)
            settled(settlement, refundLost: false, why: "denied: nothing charged")
        } else {
            emit(.card(.cardVendDenied(vend)))
        }
    }

    private func settled(_ settlement: CardSettlement, refundLost: Bool, why: String) {
        emit(
            .notice(
                "\(name): \(settlement.vend) settled as \(settlement.success ? "sold" : "not sold"): \(why)",
                isFault: refundLost))
        emit(.card(.cardVendSettled(settlement.vend, refundLost: refundLost)))
    }

    // MARK: - Resets

    /// RESET now; the master initialises the reader again.
    private func reset(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        _ = try bus.send(block(.reset))
        return true
    }

    /// The reader reset, or is about to be: what it held ends as a reset ends it (§7.4).
    private func resetHappened() {
        switch phase {
        case .approved(let vend, _): soldByReset.insert(vend)
        case .requesting(let vend, _, _, _): vendEndedWithoutApproval(vend)
        case .refunding(let settlement, _, _): settled(settlement, refundLost: false, why: "VEND FAILURE acknowledged before the reader reset")
        case .inactive: break
        case .waiting, .session, .completing: break
        }
        // Approved as far as the machine knows, not yet told: a reset makes each a sale.
        for (settlement, _) in settlements where !settlement.amount.isZero { soldByReset.insert(settlement.vend) }
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
