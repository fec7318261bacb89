import MDB

/// A cashless reader (card or phone) written from MDB §7, at 10h or 60h, levels 1–3, as a bank
/// would answer: its state machine (Inactive → Disabled → Enabled → Session Idle → Vend), sessions
/// started by a card (`presentCard`) or, with "always idle", by a selection; approval delayed by
/// a number of POLLs; and the faults a VMC must survive. Its own books (`charged`, `refunded`)
/// are what a bank would settle: a test compares them with the machine's.
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
        guard !queue.isEmpty else { return .ack }
        let answer = queue.flatMap { $0.bytes(level: config.level, expanded: expanded, vmcLevel: vmcLevel) }
        queue.removeAll()
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
