/// The bill validator at 30h, levels 1 and 2 without the recycler (MDB/ICP 4.2 §6).
public enum BillCommand: Sendable, Equatable {
    case reset
    case setup
    /// Bill types validated at "high" security.
    case security(highSecurity: [Int])
    case poll
    /// Y1–Y2 bill types accepted, Y3–Y4 those held in escrow for the VMC's decision.
    case billType(accept: [Int], escrow: [Int])
    /// Stack (true) or return the bill in escrow.
    case escrow(stack: Bool)
    case stacker
    /// EXPANSION 37 00: level-1 identification (29 bytes).
    case identification

    public var block: MDBBlock {
        let peripheral = MDBPeripheral.billValidator
        switch self {
        case .reset: return MDBBlock(peripheral: peripheral, command: 0)
        case .setup: return MDBBlock(peripheral: peripheral, command: 1)
        case .security(let high): return MDBBlock(peripheral: peripheral, command: 2, BigEndian.bytes(mask(of: high)))
        case .poll: return MDBBlock(peripheral: peripheral, command: 3)
        case .billType(let accept, let escrow):
            return MDBBlock(peripheral: peripheral, command: 4, BigEndian.bytes(mask(of: accept)) + BigEndian.bytes(mask(of: escrow)))
        case .escrow(let stack): return MDBBlock(peripheral: peripheral, command: 5, [stack ? 0x01 : 0x00])
        case .stacker: return MDBBlock(peripheral: peripheral, command: 6)
        case .identification: return MDBBlock(peripheral: peripheral, command: 7, [0x00])
        }
    }
}

/// The SETUP answer, 27 bytes (§6.2).
public struct BillSetup: Sendable, Equatable {
    public let level: UInt8
    public let currency: MDBCurrencyCode
    public let scalingFactor: UInt16
    public let decimalPlaces: UInt8
    public let stackerCapacity: UInt16
    public let highSecurityTypes: [Int]
    public let escrowCapable: Bool
    /// Credit per bill type 0–15 in units of the scaling factor: 0 unused, 255 a token.
    public let billCredits: [UInt8]

    public init(
        level: UInt8, currency: MDBCurrencyCode, scalingFactor: UInt16, decimalPlaces: UInt8, stackerCapacity: UInt16,
        highSecurityTypes: [Int], escrowCapable: Bool, billCredits: [UInt8]
    ) {
        self.level = level
        self.currency = currency
        self.scalingFactor = scalingFactor
        self.decimalPlaces = decimalPlaces
        self.stackerCapacity = stackerCapacity
        self.highSecurityTypes = highSecurityTypes
        self.escrowCapable = escrowCapable
        self.billCredits = sixteen(billCredits[...])
    }

    public init(_ bytes: [UInt8]) throws(MDBDecodeError) {
        guard bytes.count >= 11, bytes.count <= 27 else { throw MDBDecodeError("bill validator SETUP answer is not 11-27 bytes", bytes) }
        guard bytes[0] == 1 || bytes[0] == 2 else {
            throw MDBDecodeError("bill validator SETUP reports feature level \(bytes[0]), not 1 or 2", bytes)
        }
        let scaling = BigEndian.uint16(bytes, at: 3)
        guard scaling != 0 else { throw MDBDecodeError("bill validator SETUP has a bill scaling factor of 0", bytes) }
        self.init(
            level: bytes[0], currency: MDBCurrencyCode(raw: BigEndian.uint16(bytes, at: 1)), scalingFactor: scaling,
            decimalPlaces: bytes[5], stackerCapacity: BigEndian.uint16(bytes, at: 6),
            highSecurityTypes: types(in: BigEndian.uint16(bytes, at: 8)), escrowCapable: bytes[10] == 0xFF,
            billCredits: Array(bytes[11...]))
    }

    public var bytes: [UInt8] {
        // In steps: Swift 6.0 gives up type-checking the whole sum.
        var bytes: [UInt8] = [level] + BigEndian.bytes(currency.raw) + BigEndian.bytes(scalingFactor) + [decimalPlaces]
        bytes += BigEndian.bytes(stackerCapacity) + BigEndian.bytes(mask(of: highSecurityTypes))
        return bytes + [escrowCapable ? 0xFF : 0x00] + billCredits
    }

    /// Bill value in minor units; nil for an unused type or a token.
    public func value(ofType type: Int) -> Int64? {
        let credit = billCredits[type]
        guard credit != 0, credit != 0xFF else { return nil }
        return Int64(credit) * Int64(scalingFactor)
    }
}

/// The STACKER answer (§6.2): full flag and bills in the stacker.
public struct StackerStatus: Sendable, Equatable {
    public let full: Bool
    public let bills: Int

    public init(full: Bool, bills: Int) {
        self.full = full
        self.bills = bills
    }

    public init(_ bytes: [UInt8]) throws(MDBDecodeError) {
        guard bytes.count == 2 else { throw MDBDecodeError("bill validator STACKER answer is not 2 bytes", bytes) }
        let word = BigEndian.uint16(bytes, at: 0)
        self.init(full: word & 0x8000 != 0, bills: Int(word & 0x7FFF))
    }

    public var bytes: [UInt8] { BigEndian.bytes((full ? 0x8000 : 0) | UInt16(min(bills, 0x7FFF))) }
}

/// What happened to a bill (§6.2 POLL `1yyyxxxx`). Only `stacked` (and `toRecycler`) is money.
public enum BillRouting: UInt8, Sendable, Equatable {
    case stacked = 0
    case escrowPosition = 1
    case returned = 2
    case toRecycler = 3
    case disabledBillRejected = 4
    case toRecyclerManualFill = 5
    case manualDispense = 6
    case recyclerToCashBox = 7

    public var name: String {
        switch self {
        case .stacked: "stacked"
        case .escrowPosition: "in escrow"
        case .returned: "returned"
        case .toRecycler: "to the recycler"
        case .disabledBillRejected: "rejected (type disabled)"
        case .toRecyclerManualFill: "to the recycler (manual fill)"
        case .manualDispense: "dispensed manually"
        case .recyclerToCashBox: "moved from the recycler to the cash box"
        }
    }
}

/// The validator's status codes (§6.2 POLL).
public enum BillStatus: UInt8, Sendable, Equatable, CaseIterable {
    case defectiveMotor = 0x01
    case sensorProblem = 0x02
    case validatorBusy = 0x03
    case romChecksumError = 0x04
    case validatorJammed = 0x05
    case justReset = 0x06
    case billRemoved = 0x07
    case cashBoxOutOfPosition = 0x08
    case validatorDisabled = 0x09
    case invalidEscrowRequest = 0x0A
    case billRejected = 0x0B
    case possibleCreditedBillRemoval = 0x0C

    public var name: String {
        switch self {
        case .defectiveMotor: "defective motor"
        case .sensorProblem: "sensor problem"
        case .validatorBusy: "validator busy"
        case .romChecksumError: "ROM checksum error"
        case .validatorJammed: "validator jammed"
        case .justReset: "validator was reset"
        case .billRemoved: "bill removed from escrow by unknown means"
        case .cashBoxOutOfPosition: "cash box out of position (open or removed)"
        case .validatorDisabled: "validator disabled"
        case .invalidEscrowRequest: "invalid escrow request (no bill in escrow)"
        case .billRejected: "bill rejected (not recognised)"
        case .possibleCreditedBillRemoval: "possible credited bill removal"
        }
    }

    public var isFault: Bool {
        switch self {
        case .validatorBusy, .justReset, .validatorDisabled, .billRejected: false
        default: true
        }
    }
}

/// One activity from a bill validator POLL answer (§6.2).
public enum BillActivity: Sendable, Equatable {
    case bill(type: Int, routing: BillRouting)
    case status(BillStatus)
    /// `010xxxxx`: attempts to insert a bill while disabled.
    case insertedWhileDisabled(Int)
    /// Recycler statuses (`0010nnnn`, recycler never enabled here), FTL, or an undefined code.
    case unknown(UInt8)

    public static func parse(_ bytes: [UInt8]) -> [BillActivity] {
        bytes.map { z in
            if z & 0x80 != 0 { return .bill(type: Int(z & 0x0F), routing: BillRouting(rawValue: z >> 4 & 0x07)!) }
            if z & 0xE0 == 0x40 { return .insertedWhileDisabled(Int(z & 0x1F)) }
            return BillStatus(rawValue: z).map(BillActivity.status) ?? .unknown(z)
        }
    }

    public var byte: UInt8 {
        switch self {
        case .bill(let type, let routing): 0x80 | routing.rawValue << 4 | UInt8(type)
        case .status(let status): status.rawValue
        case .insertedWhileDisabled(let count): 0x40 | UInt8(min(count, 31))
        case .unknown(let byte): byte
        }
    }
}
