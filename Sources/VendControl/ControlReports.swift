import VendTelemetry

/// The answers to vendctl's queries, as they travel in `ControlResponse` (and as `vendctl --json`
/// prints them; docs/vendctl.md documents every field). Amounts come as exact decimal text and,
/// in the `…Text` twin, formatted with the machine's currency pattern. Instants are milliseconds
/// since the Unix epoch.

/// Items available for one product over every slot that sells it.
public struct ProductStock: Codable, Sendable, Equatable {
    public let product: String
    public let name: String
    public let available: Int
    public let capacity: Int
    public let slots: [String]

    public init(product: String, name: String, available: Int, capacity: Int, slots: [String]) {
        self.product = product
        self.name = name
        self.available = available
        self.capacity = capacity
        self.slots = slots
    }
}

/// The slots the current credit can buy from.
public struct PurchasableReport: Codable, Sendable, Equatable {
    public let credit: String
    public let creditText: String
    public let slots: [StatusReport.Slot]

    public init(credit: String, creditText: String, slots: [StatusReport.Slot]) {
        self.credit = credit
        self.creditText = creditText
        self.slots = slots
    }
}

/// Items past their shelf life at `at`, per slot.
public struct ExpiredReport: Codable, Sendable, Equatable {
    public struct Slot: Codable, Sendable, Equatable {
        public let slot: String
        public let product: String
        public let productName: String
        public let count: Int
        /// When the oldest of them expired.
        public let since: Int64

        public init(slot: String, product: String, productName: String, count: Int, since: Int64) {
            self.slot = slot
            self.product = product
            self.productName = productName
            self.count = count
            self.since = since
        }
    }

    public let at: Int64
    public let slots: [Slot]

    public init(at: Int64, slots: [Slot]) {
        self.at = at
        self.slots = slots
    }
}

/// A product of the catalog and the slots that sell it.
public struct ProductInfo: Codable, Sendable, Equatable {
    public let id: String
    public let name: String
    public let category: [String]
    public let hot: Bool
    public let shelfLifeDays: Int?
    public let tags: [String]
    public let slots: [String]

    public init(id: String, name: String, category: [String], hot: Bool, shelfLifeDays: Int?, tags: [String], slots: [String]) {
        self.id = id
        self.name = name
        self.category = category
        self.hot = hot
        self.shelfLifeDays = shelfLifeDays
        self.tags = tags
        self.slots = slots
    }
}

/// One category of the tree: its products and its subcategories, sorted by name. The root's name
/// is empty.
public struct CategoryReport: Codable, Sendable, Equatable {
    public let name: String
    public let path: [String]
    public let products: [ProductInfo]
    public let children: [CategoryReport]

    public init(name: String, path: [String], products: [ProductInfo], children: [CategoryReport]) {
        self.name = name
        self.path = path
        self.products = products
        self.children = children
    }
}

/// Past sales, oldest first.
public struct HistoryReport: Codable, Sendable, Equatable {
    public struct Sale: Codable, Sendable, Equatable {
        public let vend: UInt64
        public let at: Int64
        public let slot: String
        public let product: String
        public let productName: String
        public let price: String
        public let priceText: String
        /// "drop-sensor", "relay-only" or "assumed".
        public let confirmation: String
        /// How it was paid: "cash", "cashless1", "cashless2", "free-…"; absent from older daemons.
        public var payment: String? = nil

        public init(
            vend: UInt64, at: Int64, slot: String, product: String, productName: String, price: String,
            priceText: String, confirmation: String, payment: String? = nil
        ) {
            self.payment = payment
            self.vend = vend
            self.at = at
            self.slot = slot
            self.product = product
            self.productName = productName
            self.price = price
            self.priceText = priceText
            self.confirmation = confirmation
        }
    }

    public let since: Int64?
    /// How many sales the machine keeps (`machine.history_limit`); older ones are only in the totals.
    public let historyLimit: Int
    public let sales: [Sale]

    public init(since: Int64?, historyLimit: Int, sales: [Sale]) {
        self.since = since
        self.historyLimit = historyLimit
        self.sales = sales
    }
}

/// Coins in the cash box per denomination, smallest first.
public struct CoinsReport: Codable, Sendable, Equatable {
    public struct Denomination: Codable, Sendable, Equatable {
        public let value: String
        public let valueText: String
        public let count: Int
        public let amount: String
        public let amountText: String

        public init(value: String, valueText: String, count: Int, amount: String, amountText: String) {
            self.value = value
            self.valueText = valueText
            self.count = count
            self.amount = amount
            self.amountText = amountText
        }
    }

    public let count: Int
    public let total: String
    public let totalText: String
    public let denominations: [Denomination]
    /// Bills in the stacker per denomination. Absent in answers from older v1 daemons, as is
    /// `position`.
    public let bills: [Denomination]?
    /// The cash position: where the money put in went, each line an amount; the lines after
    /// "money in" add up to it.
    public let position: [PositionLine]?
    /// Figures beside the position, not in its sum: `coins-to-tubes` (of coins in),
    /// `dispensed` (of change and refunds, what the devices paid), `float-filled`,
    /// `test-payouts`, `unknown-test-payouts`, `manually-dispensed`. Absent from older daemons.
    public let details: [PositionLine]?
    /// What the cash box took since the last collection; absent from older daemons.
    public var cashBox: CashBoxReport? = nil

    public struct PositionLine: Codable, Sendable, Equatable {
        /// `coins-in`, `bills-in`, `sales`, `change-paid`, `refunds`, `unknown-payouts`, `credit`,
        /// `held-by-vend`, `payout-in-flight`.
        public let item: String
        public let amount: String
        public let amountText: String

        public init(item: String, amount: String, amountText: String) {
            self.item = item
            self.amount = amount
            self.amountText = amountText
        }
    }

    public init(
        count: Int, total: String, totalText: String, denominations: [Denomination],
        bills: [Denomination]? = nil, position: [PositionLine]? = nil, details: [PositionLine]? = nil
    ) {
        self.count = count
        self.total = total
        self.totalText = totalText
        self.denominations = denominations
        self.bills = bills
        self.position = position
        self.details = details
    }
}

/// The cash box's coins and bills per denomination, smallest first: in `status` and `coins`,
/// what it took since the last collection; in a `cash-collect` answer, what that collection took.
public struct CashBoxReport: Codable, Sendable, Equatable {
    public let coins: [CoinsReport.Denomination]
    public let bills: [CoinsReport.Denomination]
    public let total: String
    public let totalText: String
    /// The last collection's number (the box now) or this collection's (an answer); absent
    /// before the first.
    public let collection: UInt64?
    /// When the counting began: the previous collection (milliseconds since the Unix epoch);
    /// absent when nothing was collected before.
    public let since: Int64?

    public init(
        coins: [CoinsReport.Denomination], bills: [CoinsReport.Denomination], total: String, totalText: String, collection: UInt64?,
        since: Int64?
    ) {
        self.coins = coins
        self.bills = bills
        self.total = total
        self.totalText = totalText
        self.collection = collection
        self.since = since
    }
}

/// How many items sold and for how much.
public struct SalesFigures: Codable, Sendable, Equatable {
    public let count: Int
    public let amount: String
    public let amountText: String

    public init(count: Int, amount: String, amountText: String) {
        self.count = count
        self.amount = amount
        self.amountText = amountText
    }
}

/// Sales per product and per slot, and the cash that came in: what `report` charts and `audit`
/// writes.
public struct SalesReport: Codable, Sendable, Equatable {
    public struct Product: Codable, Sendable, Equatable {
        public let product: String
        public let name: String
        public let sold: SalesFigures

        public init(product: String, name: String, sold: SalesFigures) {
            self.product = product
            self.name = name
            self.sold = sold
        }
    }

    public struct Slot: Codable, Sendable, Equatable {
        public let slot: String
        public let product: String
        /// The slot's price now; absent for a slot no longer configured.
        public let price: String?
        public let priceText: String?
        public let sold: SalesFigures

        public init(slot: String, product: String, price: String?, priceText: String?, sold: SalesFigures) {
            self.slot = slot
            self.product = product
            self.price = price
            self.priceText = priceText
            self.sold = sold
        }
    }

    public let machine: String
    public let currency: String
    public let minorDigits: Int
    /// Absent: since the machine was new (exact totals). Present: from the kept sales history.
    public let since: Int64?
    /// True when `since` reaches back before the oldest sale the history still keeps.
    public let incomplete: Bool
    /// Products that sold, most sold first (then by name).
    public let products: [Product]
    /// Every configured slot in display order, then any slot that sold before it was removed.
    public let slots: [Slot]
    public let total: SalesFigures
    /// Coins customers put in since the machine was new.
    public let coinsIn: String
    public let coinsInText: String
    /// Where the cash went since the machine was new, for the DEX audit's CA3, CA4, CA10 and
    /// CA15. Absent in answers from older daemons.
    public let cash: CashFigures?
    /// Since the last DEX read with reset; absent from older daemons (and from reports `since`).
    public var sinceLastRead: Interim? = nil
    /// The whole-life sales by how they were paid (`cash`, `cashless1`, `cashless2`); absent from
    /// older daemons and from reports `since`.
    public var byPayment: [String: SalesFigures]? = nil
    /// Health and motor incidents for the DEX audit's events; absent from older daemons and from
    /// reports `since`.
    public var events: [Event]? = nil
    /// Sales per slot, payment and price list, for the DEX audit's PA7; absent on a machine
    /// without price lists (`pricing:`, `prices:`), from older daemons and from reports `since`.
    public var priceLists: [PriceListLine]? = nil

    /// One slot's sales on one price list by one payment.
    public struct PriceListLine: Codable, Sendable, Equatable {
        public let slot: String
        /// `cash`, `cashless1` or `cashless2`.
        public let payment: String
        public let list: Int
        /// The slot's price on that list for that payment now; absent for a slot no longer configured.
        public let price: String?
        public let sold: SalesFigures
        public let soldSinceLastRead: SalesFigures

        public init(slot: String, payment: String, list: Int, price: String?, sold: SalesFigures, soldSinceLastRead: SalesFigures) {
            self.slot = slot
            self.payment = payment
            self.list = list
            self.price = price
            self.sold = sold
            self.soldSinceLastRead = soldSinceLastRead
        }
    }
    /// The payment devices configured whose DEX records are conditional mandatory (`cashless1`,
    /// `cashless2`, `bill-validator`); absent from older daemons and from reports `since`.
    public var devices: [String]? = nil
    /// The DEX port's reads and resets (EA3); absent from older daemons and from reports `since`.
    public var dexReads: DEXReads? = nil
    /// The `dex:` section's `communication_id` and `asset_number`: what the DEX port's audit says
    /// (DXS01/ID101, ID106). Absent without a `dex:` section, from older daemons and `since`.
    public var dexCommunicationID: String? = nil
    public var dexAssetNumber: String? = nil

    /// Exact decimal amounts since the machine was new.
    public struct CashFigures: Codable, Sendable, Equatable {
        public let billsIn: String
        /// `billsIn` in the machine's format; absent from older daemons.
        public var billsInText: String? = nil
        /// Of the coins in, those routed to the change tubes.
        public let coinsToTubes: String
        /// Change and refunds paid by the payout devices.
        public let dispensed: String
        /// Paid out by payout tests and by the changer's own buttons.
        public let manuallyDispensed: String
        /// Put in during fill mode.
        public let filled: String
        /// What the tubes hold now, when every count is known.
        public let tubeContents: String?

        public init(
            billsIn: String, coinsToTubes: String, dispensed: String, manuallyDispensed: String, filled: String,
            tubeContents: String?
        ) {
            self.billsIn = billsIn
            self.coinsToTubes = coinsToTubes
            self.dispensed = dispensed
            self.manuallyDispensed = manuallyDispensed
            self.filled = filled
            self.tubeContents = tubeContents
        }
    }

    public init(
        machine: String, currency: String, minorDigits: Int, since: Int64?, incomplete: Bool,
        products: [Product], slots: [Slot], total: SalesFigures, coinsIn: String, coinsInText: String,
        cash: CashFigures? = nil
    ) {
        self.machine = machine
        self.currency = currency
        self.minorDigits = minorDigits
        self.since = since
        self.incomplete = incomplete
        self.products = products
        self.slots = slots
        self.total = total
        self.coinsIn = coinsIn
        self.coinsInText = coinsInText
        self.cash = cash
    }
}

/// `vendctl price --show`: every slot's prices by list and payment, the lists, the time bands
/// and the one in force.
public struct PricesReport: Codable, Sendable, Equatable {
    /// One price line: on `list`, for `payment` (`any`, `cash`, `cashless`, `cashless1`,
    /// `cashless2`); `source` is `file`, `run-time` (`vendctl price`) or `product` (the
    /// product's line, which the slot's own lines come before).
    public struct Line: Codable, Sendable, Equatable {
        public let list: Int
        public let payment: String
        public let price: String
        public let priceText: String
        public let source: String

        public init(list: Int, payment: String, price: String, priceText: String, source: String) {
            self.list = list
            self.payment = payment
            self.price = price
            self.priceText = priceText
            self.source = source
        }
    }

    public struct Slot: Codable, Sendable, Equatable {
        public let slot: String
        public let product: String
        public let productName: String
        /// List 1 for every payment first, then by list and payment.
        public let lines: [Line]

        public init(slot: String, product: String, productName: String, lines: [Line]) {
            self.slot = slot
            self.product = product
            self.productName = productName
            self.lines = lines
        }
    }

    /// A list besides list 1 and its name, as the fleet's retained `stock` message gives it.
    public typealias List = StockMessage.PriceList

    /// A time band as the file gives it, as the fleet's retained `stock` message gives it.
    public typealias Band = StockMessage.Band

    /// The lists besides list 1.
    public let lists: [List]
    public let bands: [Band]
    /// The machine's time zone, which the bands are in.
    public let timeZone: String
    /// The band in force now; absent outside bands.
    public let inForce: StatusReport.PriceBand?
    public let slots: [Slot]

    public init(lists: [List], bands: [Band], timeZone: String, inForce: StatusReport.PriceBand?, slots: [Slot]) {
        self.lists = lists
        self.bands = bands
        self.timeZone = timeZone
        self.inForce = inForce
        self.slots = slots
    }
}
