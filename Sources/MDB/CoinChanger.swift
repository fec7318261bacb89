/// The coin changer at 08h, levels 2 and 3 (MDB/ICP 4.2 §5).
public enum ChangerCommand: Sendable, Equatable {
    case reset
    case setup
    case tubeStatus
    case poll
    /// Y1–Y2 coin types accepted, Y3–Y4 coin types the inventory switches may pay out.
    case coinType(accept: [Int], manualDispense: [Int])
    /// Up to 15 coins of one type (§5.2 DISPENSE).
    case dispense(type: Int, count: Int)
    // Level 3 (EXPANSION 0F).
    case identification
    case featureEnable(ChangerFeatures)
    /// The changer chooses coins worth `scaledValue` × scaling factor (option b0).
    case alternativePayout(scaledValue: UInt8)
    case payoutStatus
    case payoutValuePoll
    case diagnosticStatus

    public var block: MDBBlock {
        let peripheral = MDBPeripheral.coinChanger
        switch self {
        case .reset: return MDBBlock(peripheral: peripheral, command: 0)
        case .setup: return MDBBlock(peripheral: peripheral, command: 1)
        case .tubeStatus: return MDBBlock(peripheral: peripheral, command: 2)
        case .poll: return MDBBlock(peripheral: peripheral, command: 3)
        case .coinType(let accept, let manual):
            return MDBBlock(peripheral: peripheral, command: 4, BigEndian.bytes(mask(of: accept)) + BigEndian.bytes(mask(of: manual)))
        case .dispense(let type, let count):
            precondition((0..<16).contains(type) && (1...15).contains(count), "DISPENSE takes 1-15 coins of type 0-15")
            return MDBBlock(peripheral: peripheral, command: 5, [UInt8(count) << 4 | UInt8(type)])
        case .identification: return MDBBlock(peripheral: peripheral, command: 7, [0x00])
        case .featureEnable(let features):
            return MDBBlock(peripheral: peripheral, command: 7, [0x01] + BigEndian.bytes32(features.rawValue))
        case .alternativePayout(let value): return MDBBlock(peripheral: peripheral, command: 7, [0x02, value])
        case .payoutStatus: return MDBBlock(peripheral: peripheral, command: 7, [0x03])
        case .payoutValuePoll: return MDBBlock(peripheral: peripheral, command: 7, [0x04])
        case .diagnosticStatus: return MDBBlock(peripheral: peripheral, command: 7, [0x05])
        }
    }
}

/// Level-3 optional features (§5.2 EXPANSION IDENTIFICATION Z30–Z33, bit 0 last).
public struct ChangerFeatures: OptionSet, Sendable, Equatable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let alternativePayout = ChangerFeatures(rawValue: 1 << 0)
    public static let extendedDiagnostics = ChangerFeatures(rawValue: 1 << 1)
    public static let controlledManualFillAndPayout = ChangerFeatures(rawValue: 1 << 2)
    public static let fileTransportLayer = ChangerFeatures(rawValue: 1 << 3)
}

/// The SETUP answer, 23 bytes (§5.2).
public struct ChangerSetup: Sendable, Equatable {
    public let level: UInt8
    public let currency: MDBCurrencyCode
    public let scalingFactor: UInt8
    public let decimalPlaces: UInt8
    /// Coin types that can go to a tube.
    public let routableToTubes: [Int]
    /// Credit per coin type 0–15, in units of the scaling factor: 0 unused, 255 a vend token.
    public let coinCredits: [UInt8]

    public init(level: UInt8, currency: MDBCurrencyCode, scalingFactor: UInt8, decimalPlaces: UInt8, routableToTubes: [Int], coinCredits: [UInt8]) {
        self.level = level
        self.currency = currency
        self.scalingFactor = scalingFactor
        self.decimalPlaces = decimalPlaces
        self.routableToTubes = routableToTubes
        self.coinCredits = sixteen(coinCredits[...])
    }

    public init(_ bytes: [UInt8]) throws(MDBDecodeError) {
        // Z8–Z23 may be cut short: bytes not sent count as 0.
        guard bytes.count >= 7, bytes.count <= 23 else { throw MDBDecodeError("changer SETUP answer is not 7-23 bytes", bytes) }
        guard bytes[0] == 2 || bytes[0] == 3 else { throw MDBDecodeError("changer SETUP reports feature level \(bytes[0]), not 2 or 3", bytes) }
        guard bytes[3] != 0 else { throw MDBDecodeError("changer SETUP has a coin scaling factor of 0", bytes) }
        self.init(
            level: bytes[0], currency: MDBCurrencyCode(raw: BigEndian.uint16(bytes, at: 1)),
            scalingFactor: bytes[3], decimalPlaces: bytes[4],
            routableToTubes: types(in: BigEndian.uint16(bytes, at: 5)), coinCredits: Array(bytes[7...]))
    }

    public var bytes: [UInt8] {
        [level] + BigEndian.bytes(currency.raw) + [scalingFactor, decimalPlaces] + BigEndian.bytes(mask(of: routableToTubes)) + coinCredits
    }

    /// Coin value in the currency's minor units (§5.2: credit × scaling factor); nil for an
    /// unused type or a token. `decimalPlaces` only places the display's point (§A3 A3•11).
    public func value(ofType type: Int) -> Int64? {
        let credit = coinCredits[type]
        guard credit != 0, credit != 0xFF else { return nil }
        return Int64(credit) * Int64(scalingFactor)
    }
}

/// The TUBE STATUS answer, 18 bytes (§5.2). A jammed tube or bad sensor shows as full with 0.
public struct TubeStatus: Sendable, Equatable {
    public let full: [Int]
    public let counts: [UInt8]

    public init(full: [Int], counts: [UInt8]) {
        self.full = full
        self.counts = sixteen(counts[...])
    }

    public init(_ bytes: [UInt8]) throws(MDBDecodeError) {
        guard bytes.count >= 2, bytes.count <= 18 else { throw MDBDecodeError("changer TUBE STATUS answer is not 2-18 bytes", bytes) }
        self.init(full: types(in: BigEndian.uint16(bytes, at: 0)), counts: Array(bytes[2...]))
    }

    public var bytes: [UInt8] { BigEndian.bytes(mask(of: full)) + counts }

    /// Types reported full with a count of 0: a jam or a defective tube sensor.
    public var suspectTubes: [Int] { full.filter { counts[$0] == 0 } }
}

/// EXPANSION IDENTIFICATION, 33 bytes (§5.2): who made it, and which level-3 options it has.
public struct PeripheralIdentification: Sendable, Equatable {
    public let manufacturer: String
    public let serialNumber: String
    public let model: String
    /// Two BCD bytes, e.g. `0x0102` = 1.02.
    public let softwareVersion: UInt16
    public let features: UInt32

    public init(manufacturer: String, serialNumber: String, model: String, softwareVersion: UInt16, features: UInt32) {
        self.manufacturer = manufacturer
        self.serialNumber = serialNumber
        self.model = model
        self.softwareVersion = softwareVersion
        self.features = features
    }

    /// `withFeatures`: 33 bytes (changer, bill level-2 ID 37 02); without: 29 (bill 37 00).
    public init(_ bytes: [UInt8], withFeatures: Bool) throws(MDBDecodeError) {
        let expected = withFeatures ? 33 : 29
        guard bytes.count >= expected else { throw MDBDecodeError("IDENTIFICATION answer is shorter than \(expected) bytes", bytes) }
        func text(_ range: Range<Int>) -> String {
            String(decoding: bytes[range].map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
                .trimmingTrailingSpaces
        }
        self.init(
            manufacturer: text(0..<3), serialNumber: text(3..<15), model: text(15..<27),
            softwareVersion: BigEndian.uint16(bytes, at: 27),
            features: withFeatures ? bytes[29..<33].reduce(0) { $0 << 8 | UInt32($1) } : 0)
    }

    public func bytes(withFeatures: Bool) -> [UInt8] {
        func field(_ text: String, _ width: Int) -> [UInt8] {
            Array(Array(text.utf8).prefix(width)) + [UInt8](repeating: 0x20, count: max(0, width - text.utf8.count))
        }
        let base = field(manufacturer, 3) + field(serialNumber, 12) + field(model, 12) + BigEndian.bytes(softwareVersion)
        return withFeatures ? base + BigEndian.bytes32(features) : base
    }

    public var summary: String {
        "\(manufacturer) \(model), serial \(serialNumber), software \(String(softwareVersion >> 8, radix: 16)).\(String(softwareVersion & 0xFF, radix: 16))"
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// Where a deposited coin went (§5.2 POLL, routing bits yy).
public enum CoinRouting: UInt8, Sendable, Equatable {
    case cashBox = 0
    case tubes = 1
    case notUsed = 2
    case rejected = 3
}

/// The changer's status codes (§5.2 POLL `0000nnnn`).
public enum ChangerStatus: UInt8, Sendable, Equatable, CaseIterable {
    case escrowRequest = 0x01
    case payoutBusy = 0x02
    case noCredit = 0x03
    case defectiveTubeSensor = 0x04
    case doubleArrival = 0x05
    case acceptorUnplugged = 0x06
    case tubeJam = 0x07
    case romChecksumError = 0x08
    case coinRoutingError = 0x09
    case changerBusy = 0x0A
    case justReset = 0x0B
    case coinJam = 0x0C
    case possibleCreditedCoinRemoval = 0x0D

    public var name: String {
        switch self {
        case .escrowRequest: "escrow request (coin return lever pressed)"
        case .payoutBusy: "changer payout busy"
        case .noCredit: "no credit (a coin was validated but did not reach the credit point)"
        case .defectiveTubeSensor: "defective tube sensor"
        case .doubleArrival: "double arrival (two coins too close to validate)"
        case .acceptorUnplugged: "acceptor unplugged from the changer"
        case .tubeJam: "tube jam during a payout"
        case .romChecksumError: "ROM checksum error"
        case .coinRoutingError: "coin routing error (a validated coin went the wrong way)"
        case .changerBusy: "changer busy"
        case .justReset: "changer was reset"
        case .coinJam: "coin jam in the acceptance path"
        case .possibleCreditedCoinRemoval: "possible credited coin removal"
        }
    }

    /// Conditions a technician must see (the rest are routine or transient).
    public var isFault: Bool {
        switch self {
        case .escrowRequest, .payoutBusy, .changerBusy, .justReset: false
        default: true
        }
    }
}

/// One activity from a changer POLL answer (§5.2); one answer may hold several, in order.
public enum ChangerActivity: Sendable, Equatable {
    /// `1yyyxxxx zzzzzzzz`: the inventory switches paid `count` coins of `type`; `tubeCount` left.
    case manuallyDispensed(type: Int, count: Int, tubeCount: UInt8)
    /// `01yyxxxx zzzzzzzz`: a coin of `type` came in and went to `routing`.
    case deposited(type: Int, routing: CoinRouting, tubeCount: UInt8)
    /// `001xxxxx`: slugs since the last activity.
    case slugs(Int)
    case status(ChangerStatus)
    /// A status number the spec does not define, or an FTL message (option b3, never enabled).
    case unknown(UInt8)

    public static func parse(_ bytes: [UInt8]) throws(MDBDecodeError) -> [ChangerActivity] {
        var activities: [ChangerActivity] = []
        var index = 0
        while index < bytes.count {
            let z1 = bytes[index]
            if z1 & 0xC0 != 0 {
                // Both coin forms carry a second byte.
                guard index + 1 < bytes.count else { throw MDBDecodeError("changer POLL answer ends inside a coin activity", bytes) }
                let z2 = bytes[index + 1]
                let type = Int(z1 & 0x0F)
                if z1 & 0x80 != 0 {
                    activities.append(.manuallyDispensed(type: type, count: Int(z1 >> 4 & 0x07), tubeCount: z2))
                } else {
                    activities.append(.deposited(type: type, routing: CoinRouting(rawValue: z1 >> 4 & 0x03)!, tubeCount: z2))
                }
                index += 2
            } else if z1 & 0x20 != 0 {
                activities.append(.slugs(Int(z1 & 0x1F)))
                index += 1
            } else {
                activities.append(ChangerStatus(rawValue: z1).map(ChangerActivity.status) ?? .unknown(z1))
                index += 1
            }
        }
        return activities
    }

    public var bytes: [UInt8] {
        switch self {
        case .manuallyDispensed(let type, let count, let tube): [0x80 | UInt8(count) << 4 | UInt8(type), tube]
        case .deposited(let type, let routing, let tube): [0x40 | routing.rawValue << 4 | UInt8(type), tube]
        case .slugs(let count): [0x20 | UInt8(min(count, 31))]
        case .status(let status): [status.rawValue]
        case .unknown(let byte): [byte]
        }
    }
}

/// PAYOUT STATUS (0F 03): coins paid per type by the last ALTERNATIVE PAYOUT; the changer
/// answers with ACK alone while it is still paying. Byte 1 is read as type 0 (see reference §2.6:
/// the spec's example contradicts its own text; check against a real changer).
public struct PayoutStatus: Sendable, Equatable {
    public let coinsPaid: [UInt8]

    public init(coinsPaid: [UInt8]) { self.coinsPaid = sixteen(coinsPaid[...]) }

    public init(_ bytes: [UInt8]) throws(MDBDecodeError) {
        guard !bytes.isEmpty, bytes.count <= 16 else { throw MDBDecodeError("changer PAYOUT STATUS answer is not 1-16 bytes", bytes) }
        self.init(coinsPaid: bytes)
    }

    public var bytes: [UInt8] { coinsPaid }
}
