import VendingCore

/// One coin or bill type of an MDB device, as the technician's table maps it: the device's type
/// number (0–15, the position in its SETUP answer) and the value vendd credits for it. The
/// device's own SETUP must say the same value, or the type is refused (see MDBCoinChanger).
public struct MDBDenomination: Sendable, Equatable {
    public let type: Int
    public let value: Money
    public let enabled: Bool
    /// A bill type the validator checks at its high security level (SECURITY, §6.2); never set
    /// for coins.
    public let highSecurity: Bool
    public let origin: ConfigOrigin

    public init(type: Int, value: Money, enabled: Bool, highSecurity: Bool = false, origin: ConfigOrigin) {
        self.type = type
        self.value = value
        self.enabled = enabled
        self.highSecurity = highSecurity
        self.origin = origin
    }
}

public struct MDBChangerSettings: Sendable {
    public let coins: [MDBDenomination]
    /// How long a payout may go without any sign of progress (a coin counted out, a tube count
    /// going down, a payout command ending) before vendd stops waiting and books what the tubes
    /// say paid, the rest unknown. A payout that keeps moving is never cut.
    public let payoutStallLimit: Duration

    /// MDB asks a VMC to wait at least 30 s for data belonging to a command (§A3).
    public static let defaultPayoutStallLimit: Duration = .seconds(30)

    public init(coins: [MDBDenomination], payoutStallLimit: Duration = defaultPayoutStallLimit) {
        self.coins = coins
        self.payoutStallLimit = payoutStallLimit
    }
}

public struct MDBBillValidatorSettings: Sendable {
    public let bills: [MDBDenomination]
    /// Hold each bill in escrow and stack it only when the machine can take it (else return it).
    public let escrow: Bool

    public init(bills: [MDBDenomination], escrow: Bool) {
        self.bills = bills
        self.escrow = escrow
    }
}

/// A cashless reader (card or phone) on the bus, at 10h (#1) or 60h (#2).
public struct MDBCashlessSettings: Sendable {
    public let reader: CardReader
    /// Offer "always idle" when the reader does: the customer selects first, then taps.
    public let selectionFirst: Bool
    /// A session left idle this long is ended (SESSION COMPLETE).
    public let sessionTimeout: Duration
    public let origin: ConfigOrigin

    public static let defaultSessionTimeout: Duration = .seconds(60)

    public init(reader: CardReader, selectionFirst: Bool = true, sessionTimeout: Duration = defaultSessionTimeout, origin: ConfigOrigin) {
        self.reader = reader
        self.selectionFirst = selectionFirst
        self.sessionTimeout = sessionTimeout
        self.origin = origin
    }
}

/// The MDB bus behind one master interface (a Qibixx MDB-USB or MDB Pi HAT).
public struct MDBSettings: Sendable {
    /// A device path (`/dev/ttyACM0`, `/dev/serial/by-id/…`) or `unix:/path/to/socket`.
    public let port: String
    public let currency: Currency
    /// The ISO 4217 numeric code the devices must report in SETUP (KRW 410); nil: not checked.
    public let currencyNumeric: Int?
    /// Between two POLLs of one device: 25–200 ms by the spec (§2.4.3), 125–200 recommended.
    public let pollInterval: Duration
    public let changer: MDBChangerSettings?
    public let billValidator: MDBBillValidatorSettings?
    public let cashless: [MDBCashlessSettings]
    /// How the devices' notices show amounts: the machine's format (nil: "1.50 EUR").
    public var moneyFormat: MoneyFormat?

    /// The Qibixx interfaces' serial settings (docs.qibixx.com "API general").
    public static let interfaceBaudRate = 115_200

    public init(
        port: String, currency: Currency, currencyNumeric: Int?, pollInterval: Duration, changer: MDBChangerSettings?,
        billValidator: MDBBillValidatorSettings?, cashless: [MDBCashlessSettings] = [], moneyFormat: MoneyFormat? = nil
    ) {
        self.moneyFormat = moneyFormat
        self.port = port
        self.currency = currency
        self.currencyNumeric = currencyNumeric
        self.pollInterval = pollInterval
        self.changer = changer
        self.billValidator = billValidator
        self.cashless = cashless
    }
}
