/// What an EVA-DTS audit reports: the machine's identity, and its sales and cash since
/// initialisation. Amounts are integer minor units ("Nc" numbers with `decimalPlaces` implied).
public struct DEXAudit: Sendable, Equatable {
    public struct Selection: Sendable, Equatable {
        /// The selection as labelled on the machine ("A1").
        public let id: String
        public let price: Int64?
        public let vends: Int
        public let value: Int64

        public init(id: String, price: Int64?, vends: Int, value: Int64) {
            self.id = id
            self.price = price
            self.vends = vends
            self.value = value
        }
    }

    /// DXS01: a 3-letter manufacturer code and 7 digits.
    public let communicationID: String
    /// ID106, the operator's asset number for the machine.
    public let assetNumber: String
    /// ID104, where the machine stands.
    public let location: String
    public let decimalPlaces: Int
    /// ISO 4217 alphabetic code (ID403).
    public let currencyCode: String
    public let selections: [Selection]
    public let cash: Cash
    /// The "since last reset" figures; nil for a machine never read over its DEX port.
    public var sinceReset: Interim? = nil
    /// Paid vends by how they were paid (`cash`, `cashless1`, `cashless2`): CA2, DA2 and DB2.
    /// Empty from a daemon that did not split them: every sale then counts as cash.
    public var byPayment: [String: Sales] = [:]
    /// Health and motor events (EA1/EA2), in the order they are written; those not reported
    /// (inactive and nothing since the last reset) are left out of the file.
    public var events: [Event] = []
    /// The payment devices configured (EVA-DTS 6.1.1 p.41: "CM = Conditional Mandatory (required
    /// if the device or feature is present in vending system)"): their records are sent, with
    /// zeros before their first sale.
    public var devices: Set<Device> = []
    /// The reads and resets since initialisation and this read's date, time and reader (EA3).
    public var reads = Reads()
    /// Each selection's sales per payment device and price list (PA7), by selection id; empty on
    /// a machine without price lists, whose PA2 says it all.
    public var priceLists: [String: [ListSales]] = [:]

    /// PA7: a selection's sales on one price list by one payment device (EVA-DTS 6.1.1 p.141;
    /// data dictionary p.254).
    public struct ListSales: Sendable, Equatable {
        /// PA702: `CA` cash (coins and bills), `DA` cashless 1, `DB` cashless 2.
        public let device: String
        /// PA703.
        public let list: Int
        /// PA704, the price on that list; nil for a selection no longer configured.
        public let price: Int64?
        /// PA705–PA706 and PA707–PA708.
        public let total: Sales
        public let sinceReset: Sales

        public init(device: String, list: Int, price: Int64?, total: Sales, sinceReset: Sales) {
            self.device = device
            self.list = list
            self.price = price
            self.total = total
            self.sinceReset = sinceReset
        }

        /// PA702's code for a payment as vendd names it (`cash`, `cashless1`, `cashless2`).
        public static func device(of payment: String) -> String? {
            deviceCodes[payment]
        }

        /// The payment as vendd names it for PA702's code, nil for another code.
        public static func payment(ofDevice code: String) -> String? {
            deviceCodes.first { $0.value == code }?.key
        }

        private static let deviceCodes = ["cash": "CA", "cashless1": "DA", "cashless2": "DB"]
    }

    /// A payment device whose records are conditional mandatory.
    public enum Device: String, Sendable, Hashable, CaseIterable {
        /// DA2 (p.33: DA201, DA202 CM).
        case cashless1
        /// DB2 (p.34: DB201, DB202 CM).
        case cashless2
        /// CA309/CA310 (p.31: CA310 CM; note 6: "new designs need only send CA309 and CA310").
        case billValidator = "bill-validator"
    }

    /// A number of vends and their value, in minor units.
    public struct Sales: Sendable, Equatable {
        public let vends: Int
        public let value: Int64

        public init(vends: Int, value: Int64) {
            self.vends = vends
            self.value = value
        }
    }

    /// Where the cash went (CA3, CA4, CA10, CA15).
    public struct Cash: Sendable, Equatable {
        public let coinsIn: Int64
        /// Of `coinsIn`, the coins routed to the change tubes; the rest went to the cash box.
        public let coinsToTubes: Int64
        public let billsIn: Int64
        /// Change and refunds the payout devices paid.
        public let dispensed: Int64
        /// Payout tests and the changer's own buttons.
        public let manuallyDispensed: Int64
        /// Put in during fill mode: not customers' money, so not in `coinsIn`.
        public let filled: Int64
        /// What the tubes hold now, if known.
        public let tubeContents: Int64?

        public init(
            coinsIn: Int64, coinsToTubes: Int64 = 0, billsIn: Int64 = 0, dispensed: Int64 = 0,
            manuallyDispensed: Int64 = 0, filled: Int64 = 0, tubeContents: Int64? = nil
        ) {
            self.coinsIn = coinsIn
            self.coinsToTubes = coinsToTubes
            self.billsIn = billsIn
            self.dispensed = dispensed
            self.manuallyDispensed = manuallyDispensed
            self.filled = filled
            self.tubeContents = tubeContents
        }
    }

    public init(
        communicationID: String, assetNumber: String, location: String, decimalPlaces: Int,
        currencyCode: String, selections: [Selection], cash: Cash
    ) {
        self.communicationID = communicationID
        self.assetNumber = assetNumber
        self.location = location
        self.decimalPlaces = decimalPlaces
        self.currencyCode = currencyCode
        self.selections = selections
        self.cash = cash
    }

    public var paidVends: Int { selections.reduce(0) { $0 + $1.vends } }
    public var paidValue: Int64 { selections.reduce(0) { $0 + $1.value } }

    /// Whether `text` is a valid DXS01 communication id.
    public static func isValidCommunicationID(_ text: String) -> Bool {
        let characters = Array(text.unicodeScalars)
        return characters.count == 10
            && characters.prefix(3).allSatisfy { ("A"..."Z").contains($0) }
            && characters.dropFirst(3).allSatisfy { ("0"..."9").contains($0) }
    }
}
