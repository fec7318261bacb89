/// The cashless device (card or phone reader) at 10h (#1) or 60h (#2), levels 1–3 (MDB/ICP 4.2
/// §7). Money is unsigned and MSB first: 16 bits, or 32 in expanded currency mode (a level-3
/// reader with the 32-bit feature enabled), scaled by the reader's scale factor and decimal places.
public enum CashlessCommand: Sendable, Equatable {
    case reset
    /// SETUP config data (11 00): the VMC's level and display (none here: 0 columns, 0 rows).
    case setupConfig(vmcLevel: UInt8)
    /// SETUP max/min price (11 01), in scaled units; `currency` given: the expanded form.
    case setupPrices(maximum: UInt32, minimum: UInt32, currency: MDBCurrencyCode?)
    case poll
    /// VEND REQUEST (13 00): `price` scaled, `item` the selection number (FFFFh undefined).
    case vendRequest(price: UInt32, item: UInt16, expanded: Bool)
    /// VEND CANCEL (13 01): only between VEND REQUEST and APPROVED/DENIED (§7.4).
    case vendCancel
    case vendSuccess(item: UInt16)
    /// VEND FAILURE (13 03): the item did not come out; the reader refunds.
    case vendFailure
    case sessionComplete
    /// CASH SALE (13 05): a sale paid in cash, for the reader's own telemetry (option b3).
    case cashSale(price: UInt32, item: UInt16, currency: MDBCurrencyCode?)
    case readerDisable
    case readerEnable
    case readerCancel
    case revalueRequest(amount: UInt32, expanded: Bool)
    case revalueLimitRequest
    /// EXPANSION REQUEST ID (17 00): the VMC says who it is.
    case requestID(manufacturer: String, serialNumber: String, model: String, softwareVersion: UInt16)
    /// EXPANSION OPTIONAL FEATURE ENABLE (17 04), level 3: only bits the reader offered.
    case featureEnable(CashlessFeatures)
    /// The reader's own age verification (`AgeVerification`): DRAVP, the age it checks for.
    case ageVerificationAge(UInt8)
    /// DRAVS: check the customer's age now.
    case ageVerificationCheck

    public func block(for reader: MDBPeripheral) -> MDBBlock {
        precondition(reader == .cashless1 || reader == .cashless2, "cashless commands go to 10h or 60h")
        switch self {
        case .reset: return MDBBlock(peripheral: reader, command: 0)
        case .setupConfig(let level): return MDBBlock(peripheral: reader, command: 1, [0x00, level, 0x00, 0x00, 0x00])
        case .setupPrices(let maximum, let minimum, let currency):
            guard let currency else {
                return MDBBlock(
                    peripheral: reader, command: 1, [0x01] + BigEndian.bytes(UInt16(clamping: maximum)) + BigEndian.bytes(UInt16(clamping: minimum)))
            }
            return MDBBlock(
                peripheral: reader, command: 1, [0x01] + BigEndian.bytes32(maximum) + BigEndian.bytes32(minimum) + BigEndian.bytes(currency.raw))
        case .poll: return MDBBlock(peripheral: reader, command: 2)
        case .vendRequest(let price, let item, let expanded):
            return MDBBlock(peripheral: reader, command: 3, [0x00] + money(price, expanded: expanded) + BigEndian.bytes(item))
        case .vendCancel: return MDBBlock(peripheral: reader, command: 3, [0x01])
        case .vendSuccess(let item): return MDBBlock(peripheral: reader, command: 3, [0x02] + BigEndian.bytes(item))
        case .vendFailure: return MDBBlock(peripheral: reader, command: 3, [0x03])
        case .sessionComplete: return MDBBlock(peripheral: reader, command: 3, [0x04])
        case .cashSale(let price, let item, let currency):
            guard let currency else {
                return MDBBlock(peripheral: reader, command: 3, [0x05] + money(price, expanded: false) + BigEndian.bytes(item))
            }
            return MDBBlock(
                peripheral: reader, command: 3, [0x05] + money(price, expanded: true) + BigEndian.bytes(item) + BigEndian.bytes(currency.raw))
        case .readerDisable: return MDBBlock(peripheral: reader, command: 4, [0x00])
        case .readerEnable: return MDBBlock(peripheral: reader, command: 4, [0x01])
        case .readerCancel: return MDBBlock(peripheral: reader, command: 4, [0x02])
        case .revalueRequest(let amount, let expanded): return MDBBlock(peripheral: reader, command: 5, [0x00] + money(amount, expanded: expanded))
        case .revalueLimitRequest: return MDBBlock(peripheral: reader, command: 5, [0x01])
        case .requestID(let manufacturer, let serialNumber, let model, let version):
            let identity = PeripheralIdentification(
                manufacturer: manufacturer, serialNumber: serialNumber, model: model,
                softwareVersion: version, features: 0)
            return MDBBlock(peripheral: reader, command: 7, [0x00] + identity.bytes(withFeatures: false))
        case .featureEnable(let features): return MDBBlock(peripheral: reader, command: 7, [0x04] + BigEndian.bytes32(features.rawValue))
        case .ageVerificationAge(let age): return MDBBlock(peripheral: reader, command: 7, AgeVerification.setAge(age))
        case .ageVerificationCheck: return MDBBlock(peripheral: reader, command: 7, AgeVerification.check)
        }
    }

    private func money(_ value: UInt32, expanded: Bool) -> [UInt8] {
        expanded ? BigEndian.bytes32(value) : BigEndian.bytes(UInt16(clamping: value))
    }
}

/// Level-3 optional features (PERIPHERAL ID Z31–Z34, EXPANSION 17 04; §7.4).
public struct CashlessFeatures: OptionSet, Sendable, Equatable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let fileTransportLayer = CashlessFeatures(rawValue: 1 << 0)
    /// 32-bit money ("expanded currency mode", with multi-currency).
    public static let money32 = CashlessFeatures(rawValue: 1 << 1)
    public static let multiCurrency = CashlessFeatures(rawValue: 1 << 2)
    public static let negativeVend = CashlessFeatures(rawValue: 1 << 3)
    public static let dataEntry = CashlessFeatures(rawValue: 1 << 4)
    /// A VEND REQUEST is accepted in the Enabled state: select first, then tap.
    public static let alwaysIdle = CashlessFeatures(rawValue: 1 << 5)
}

/// READER CONFIG DATA's miscellaneous options (Z8).
public struct CashlessOptions: OptionSet, Sendable, Equatable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// It can restore funds to the card (a VEND FAILURE is refunded).
    public static let canRefund = CashlessOptions(rawValue: 1 << 0)
    /// More than one vend per session; else the VMC ends the session after each.
    public static let multiVend = CashlessOptions(rawValue: 1 << 1)
    public static let ownDisplay = CashlessOptions(rawValue: 1 << 2)
    /// It wants CASH SALE for every cash sale.
    public static let cashSale = CashlessOptions(rawValue: 1 << 3)
}

/// READER CONFIG DATA (01, 8 bytes; §7.4): the reader's level, currency and money scale, and how
/// long it may take to answer a command that returns data (up to 255 s: an online authorisation).
public struct ReaderConfig: Sendable, Equatable {
    public let level: UInt8
    public let currency: MDBCurrencyCode
    public let scaleFactor: UInt8
    public let decimalPlaces: UInt8
    /// Application maximum response time, in seconds.
    public let maximumResponseTime: UInt8
    public let options: CashlessOptions

    public init(
        level: UInt8, currency: MDBCurrencyCode, scaleFactor: UInt8, decimalPlaces: UInt8, maximumResponseTime: UInt8,
        options: CashlessOptions
    ) {
        self.level = level
        self.currency = currency
        self.scaleFactor = scaleFactor
        self.decimalPlaces = decimalPlaces
        self.maximumResponseTime = maximumResponseTime
        self.options = options
    }

    /// Without the leading 01.
    init(_ bytes: ArraySlice<UInt8>) throws(MDBDecodeError) {
        let bytes = Array(bytes)
        guard (1...3).contains(bytes[0]) else { throw MDBDecodeError("READER CONFIG DATA reports level \(bytes[0]), not 1-3", bytes) }
        guard bytes[3] != 0 else { throw MDBDecodeError("READER CONFIG DATA has a scale factor of 0", bytes) }
        self.init(
            level: bytes[0], currency: MDBCurrencyCode(raw: BigEndian.uint16(bytes, at: 1)), scaleFactor: bytes[3],
            decimalPlaces: bytes[4], maximumResponseTime: bytes[5], options: CashlessOptions(rawValue: bytes[6]))
    }

    var bytes: [UInt8] {
        [0x01, level] + BigEndian.bytes(currency.raw) + [scaleFactor, decimalPlaces, maximumResponseTime, options.rawValue]
    }
}

/// BEGIN SESSION (03; §7.4): a card or phone was presented.
public struct BeginSession: Sendable, Equatable {
    /// Funds available, scaled; nil when the reader does not say (FFFFh): the customer selects
    /// without seeing a balance.
    public let funds: UInt32?
    /// Levels 2 and 3: the media's id, the payment type (b7 free vend, b6 test media) and data.
    public let mediaID: UInt32?
    public let paymentType: UInt8?
    public let paymentData: UInt16?

    public init(funds: UInt32?, mediaID: UInt32? = nil, paymentType: UInt8? = nil, paymentData: UInt16? = nil) {
        self.funds = funds
        self.mediaID = mediaID
        self.paymentType = paymentType
        self.paymentData = paymentData
    }

    /// A free-vend card: not a sale.
    public var isFreeVend: Bool { (paymentType ?? 0) & 0x80 != 0 }
    /// Test media: not a sale.
    public var isTestMedia: Bool { (paymentType ?? 0) & 0xC0 == 0x40 }
}

/// How a reader answers (POLL, or the data of a command; §7.4): several may stand in one block,
/// each of a fixed length that depends on the reader's level and on expanded currency mode.
public enum CashlessResponse: Sendable, Equatable {
    case justReset
    case readerConfig(ReaderConfig)
    /// Text for the VMC's display for `tenths` of a second (only if the VMC offered a display).
    case displayRequest(tenths: UInt8, text: [UInt8])
    case beginSession(BeginSession)
    case sessionCancelRequest
    /// The amount really charged (nil: a token, FFFF(FFFF)h).
    case vendApproved(amount: UInt32?)
    case vendDenied
    case endSession
    case cancelled
    case peripheralID(PeripheralIdentification)
    case malfunction(code: UInt8)
    /// The reader's state at levels 2/3 (1 inactive … 7 negative vend); nil at level 1.
    case commandOutOfSequence(readerState: UInt8?)
    case revalueApproved
    case revalueDenied
    case revalueLimit(amount: UInt32)
    case timeDateRequest
    case dataEntryRequest(UInt8)
    case dataEntryCancel
    /// FF: manufacturer data, the rest of the block.
    case diagnostic([UInt8])

    /// Splits a reader's block into its responses, in order. `level` is the reader's level (1 until
    /// its READER CONFIG DATA says otherwise), `expanded` whether 32-bit money is enabled, and
    /// `vmcLevel` the level the VMC announced (a level-3 VMC gets the PERIPHERAL ID's feature bits).
    public static func parse(_ bytes: [UInt8], level: UInt8, expanded: Bool, vmcLevel: UInt8 = 3) throws(MDBDecodeError) -> [CashlessResponse] {
        var responses: [CashlessResponse] = []
        var index = 0
        let money = expanded ? 4 : 2
        while index < bytes.count {
            let code = bytes[index]
            /// A part's error names the whole block, as every MDB decode error does.
            func whole<Part>(_ decode: () throws(MDBDecodeError) -> Part) throws(MDBDecodeError) -> Part {
                do { return try decode() } catch { throw MDBDecodeError(error.what, bytes) }
            }
            func take(_ length: Int) throws(MDBDecodeError) -> ArraySlice<UInt8> {
                guard index + length <= bytes.count else {
                    throw MDBDecodeError("cashless response \(Hex.encode([code])) needs \(length) bytes, \(bytes.count - index) left", bytes)
                }
                defer { index += length }
                return bytes[(index + 1)..<(index + length)]
            }
            switch code {
            case 0x00:
                _ = try take(1)
                responses.append(.justReset)
            case 0x01:
                let body = try take(8)
                responses.append(.readerConfig(try whole { () throws(MDBDecodeError) in try ReaderConfig(body) }))
            case 0x02:
                // The display's size is the VMC's, and vendd offers none: the rest is the text.
                let rest = try take(bytes.count - index)
                guard let tenths = rest.first else { throw MDBDecodeError("DISPLAY REQUEST without its time", bytes) }
                responses.append(.displayRequest(tenths: tenths, text: Array(rest.dropFirst())))
            case 0x03:
                let length = level == 1 ? 1 + money : (expanded ? 17 : 10)
                let body = Array(try take(length))
                let funds = uint(body[0..<money])
                let unknown: UInt32 = expanded ? 0xFFFF_FFFF : 0xFFFF
                var session = BeginSession(funds: funds == unknown ? nil : funds)
                if level >= 2 {
                    session = BeginSession(
                        funds: session.funds, mediaID: uint(body[money..<(money + 4)]), paymentType: body[money + 4],
                        paymentData: UInt16(uint(body[(money + 5)..<(money + 7)])))
                }
                responses.append(.beginSession(session))
            case 0x04:
                _ = try take(1)
                responses.append(.sessionCancelRequest)
            case 0x05:
                let amount = uint(try take(1 + money))
                responses.append(.vendApproved(amount: amount == (expanded ? 0xFFFF_FFFF : 0xFFFF) ? nil : amount))
            case 0x06:
                _ = try take(1)
                responses.append(.vendDenied)
            case 0x07:
                _ = try take(1)
                responses.append(.endSession)
            case 0x08:
                _ = try take(1)
                responses.append(.cancelled)
            case 0x09:
                let withFeatures = level >= 3 && vmcLevel >= 3
                let body = try take(withFeatures ? 34 : 30)
                responses.append(
                    .peripheralID(try whole { () throws(MDBDecodeError) in try PeripheralIdentification(Array(body), withFeatures: withFeatures) }))
            case 0x0A: responses.append(.malfunction(code: try take(2).first!))
            case 0x0B:
                let body = try take(level == 1 ? 1 : 2)
                responses.append(.commandOutOfSequence(readerState: body.first))
            case 0x0D:
                _ = try take(1)
                responses.append(.revalueApproved)
            case 0x0E:
                _ = try take(1)
                responses.append(.revalueDenied)
            case 0x0F: responses.append(.revalueLimit(amount: uint(try take(1 + money))))
            case 0x11:
                _ = try take(1)
                responses.append(.timeDateRequest)
            case 0x12: responses.append(.dataEntryRequest(try take(2).first!))
            case 0x13:
                _ = try take(1)
                responses.append(.dataEntryCancel)
            case 0xFF: responses.append(.diagnostic(Array(try take(bytes.count - index))))
            default:
                throw MDBDecodeError("cashless response code \(Hex.encode([code])) is not one vendd knows (FTL is never enabled)", bytes)
            }
        }
        return responses
    }

    /// The bytes a reader sends for this response (for simulators and tests).
    public func bytes(level: UInt8, expanded: Bool, vmcLevel: UInt8 = 3) -> [UInt8] {
        let money: (UInt32) -> [UInt8] = { expanded ? BigEndian.bytes32($0) : BigEndian.bytes(UInt16(clamping: $0)) }
        let unknown: UInt32 = expanded ? 0xFFFF_FFFF : 0xFFFF
        switch self {
        case .justReset: return [0x00]
        case .readerConfig(let config): return config.bytes
        case .displayRequest(let tenths, let text): return [0x02, tenths] + text
        case .beginSession(let session):
            let head = [0x03] + money(session.funds ?? unknown)
            guard level >= 2 else { return head }
            let tail = BigEndian.bytes32(session.mediaID ?? 0xFFFF_FFFF) + [session.paymentType ?? 0] + BigEndian.bytes(session.paymentData ?? 0)
            // Expanded: language, user currency and card options, none given.
            return head + tail + (expanded ? [0x00, 0x00, 0x00, 0x00, 0x00] : [])
        case .sessionCancelRequest: return [0x04]
        case .vendApproved(let amount): return [0x05] + money(amount ?? unknown)
        case .vendDenied: return [0x06]
        case .endSession: return [0x07]
        case .cancelled: return [0x08]
        case .peripheralID(let identity): return [0x09] + identity.bytes(withFeatures: level >= 3 && vmcLevel >= 3)
        case .malfunction(let code): return [0x0A, code]
        case .commandOutOfSequence(let state): return level == 1 ? [0x0B] : [0x0B, state ?? 0]
        case .revalueApproved: return [0x0D]
        case .revalueDenied: return [0x0E]
        case .revalueLimit(let amount): return [0x0F] + money(amount)
        case .timeDateRequest: return [0x11]
        case .dataEntryRequest(let length): return [0x12, length]
        case .dataEntryCancel: return [0x13]
        case .diagnostic(let data): return [0xFF] + data
        }
    }
}

/// MALFUNCTION/ERROR codes by their high nibble (§7.4): what a technician reads.
public enum CashlessMalfunction {
    public static func describe(_ code: UInt8) -> String {
        let kind: String
        switch code >> 4 {
        case 0x0: kind = "payment media error"
        case 0x1: kind = "invalid payment media"
        case 0x2: kind = "tamper error"
        case 0x3, 0x7, 0xB: kind = "manufacturer-defined error"
        case 0x4, 0x9: kind = "communications error"
        case 0x5: kind = "reader requires service"
        case 0x8: kind = "reader failure"
        case 0xA: kind = "payment media jammed"
        case 0xC: kind = "refund error: the reader could not restore the customer's funds"
        default: kind = "undefined error"
        }
        return "\(kind) (\(Hex.encode([code])))"
    }

    /// Whether the reader can no longer take payments (§7.4: 8x, 9x, Ax).
    public static func isDisabling(_ code: UInt8) -> Bool { (0x8...0xA).contains(code >> 4) }
}

private func uint(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    bytes.reduce(0) { $0 << 8 | UInt32($1) }
}
