import MDB

/// A level-1 bill validator with escrow written from MDB §6: KRW 1,000 / 5,000 / 10,000 /
/// 50,000 won (scaling 1000), a stacker, and faults on demand.
public final class SimulatedBillValidator: SimulatedPeripheral {
    public let address = MDBPeripheral.billValidator

    public struct Faults: Sendable, Equatable {
        public var silent = false
        /// The next bill jams in the transport: VALIDATOR JAMMED, and it is neither stacked nor
        /// returned until `clearJam`.
        public var billJam = false
        public init() {}
    }

    public var faults = Faults()
    public var setup = BillSetup(
        level: 1, currency: MDBCurrencyCode(raw: 0x1410), scalingFactor: 1000, decimalPlaces: 0, stackerCapacity: 400,
        highSecurityTypes: Array(0..<16), escrowCapable: true, billCredits: [1, 5, 10, 50])
    public var stackerCapacity = 400
    /// Every bill ever stacked: what the machine must credit, once each.
    public private(set) var stacked: [Int] = []
    public private(set) var stackerCount = 0
    public private(set) var returned: [Int] = []
    public private(set) var acceptMask: [Int] = []
    public private(set) var escrowMask: [Int] = []
    /// The bill types SECURITY (32h) last set to high security; nil when not sent since a reset.
    public private(set) var highSecurity: [Int]?
    public private(set) var inEscrow: Int?
    public private(set) var jammed: Int?
    public private(set) var cashBoxRemoved = false

    private var queue = ActivityQueue<BillActivity>()

    public init() { busReset() }

    public var stackerFull: Bool { stackerCount >= stackerCapacity }

    /// Whether something waits to be told on the next POLL, or a bill waits in escrow for the
    /// machine's decision.
    public var hasPendingReports: Bool { !queue.items.isEmpty || inEscrow != nil }

    /// A customer's bill. Disabled types, a full stacker or a missing cash box refuse it.
    public func insert(type: Int) {
        guard !faults.silent else { return }
        guard acceptMask.contains(type), !stackerFull, !cashBoxRemoved else {
            queue.append(acceptMask.isEmpty ? .insertedWhileDisabled(1) : .bill(type: type, routing: .disabledBillRejected))
            returned.append(type)
            return
        }
        if faults.billJam {
            faults.billJam = false
            jammed = type
            queue.append(.status(.validatorJammed))
            return
        }
        if escrowMask.contains(type) {
            inEscrow = type
            queue.append(.bill(type: type, routing: .escrowPosition))
        } else {
            stack(type)
        }
    }

    /// The jammed bill is pulled out and given back to the customer.
    public func clearJam() {
        guard let jammed else { return }
        returned.append(jammed)
        queue.append(.bill(type: jammed, routing: .returned))
        self.jammed = nil
    }

    public func removeCashBox() {
        cashBoxRemoved = true
        queue.append(.status(.cashBoxOutOfPosition))
    }

    public func replaceCashBox() { cashBoxRemoved = false }

    /// The technician empties the stacker.
    public func emptyStacker() { stackerCount = 0 }

    public func resetItself() { busReset() }

    public func busReset() {
        queue.clear()
        // RESET returns an escrowed bill (§6.2).
        if let inEscrow {
            returned.append(inEscrow)
            self.inEscrow = nil
        }
        queue.append(.status(.justReset))
        acceptMask = []
        escrowMask = []
        highSecurity = nil
    }

    public func respond(to block: MDBBlock) -> MDBAnswer {
        guard !faults.silent else { return .noAnswer }
        switch block.command {
        case 0:
            busReset()
            return .ack
        case 1: return .data(setup.bytes)
        case 2 where block.data.count == 2:
            highSecurity = (0..<16).filter { word(block.data, 0) & 1 << $0 != 0 }
            return .ack
        case 3:
            var activities = queue.take { _ in 1 }
            if acceptMask.isEmpty, activities.count < 16 { activities.append(.status(.validatorDisabled)) }
            return activities.isEmpty ? .ack : .data(activities.map(\.byte))
        case 4 where block.data.count == 4:
            acceptMask = (0..<16).filter { word(block.data, 0) & 1 << $0 != 0 }
            escrowMask = (0..<16).filter { word(block.data, 2) & 1 << $0 != 0 }
            return .ack
        case 5 where block.data.count == 1:
            guard let bill = inEscrow else {
                queue.append(.status(.invalidEscrowRequest))
                return .ack
            }
            inEscrow = nil
            if block.data[0] & 1 != 0 {
                stack(bill)
            } else {
                returned.append(bill)
                queue.append(.bill(type: bill, routing: .returned))
            }
            return .ack
        case 6: return .data(StackerStatus(full: stackerFull, bills: stackerCount).bytes)
        case 7 where block.data == [0x00]:
            return .data(
                PeripheralIdentification(
                    manufacturer: "VSM", serialNumber: "000000003030", model: "SIM-BILLS",
                    softwareVersion: 0x0100, features: 0
                ).bytes(withFeatures: false))
        default: return .noAnswer
        }
    }

    private func stack(_ type: Int) {
        stacked.append(type)
        stackerCount += 1
        queue.append(.bill(type: type, routing: .stacked))
    }
}
