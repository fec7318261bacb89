/// One money or stock event as it leaves the machine: QoS 1 on `<prefix>/<machine>/events/<type>`.
/// `id` is chosen once, before the event is journaled, so every delivery of it (after a broker
/// outage, a restart) carries the same id and a consumer drops duplicates by it. `seq` numbers the
/// machine's events 1, 2, 3… without gaps, durable in the same journal record as `id`: a store
/// acknowledges the highest contiguous one it has committed (`StoredAcknowledgement`).
/// Amounts are exact decimal strings in `currency` ("1.50"), never floating point.
public struct TelemetryEvent: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case coinCredited = "coin-credited"
        case billCredited = "bill-credited"
        case creditChanged = "credit-changed"
        case vendStarted = "vend-started"
        case vendEnded = "vend-ended"
        case refund
        case payoutStarted = "payout-started"
        case payoutEnded = "payout-ended"
        case exactChangeOnly = "exact-change-only"
        case stockChanged = "stock-changed"
        case priceChanged = "price-changed"
        case serviceMode = "service-mode"
        case fillMode = "fill-mode"
        case floatAdded = "float-added"
        case manualDispense = "manual-dispense"
        case fault
        case cardSession = "card-session"
        case cardVend = "card-vend"
        /// A DEX session on the machine's port ended: `reason` says who, what and how.
        case dexSession = "dex-session"
        /// A zone's food-safety lock latched (`on` true, `reason` why) or was serviced (`on` false).
        case healthLock = "health-lock"
        /// A slot taken out of service by a motor fault (`on` true, `reason` the fault) or
        /// cleared by a technician (`on` false, `reason` who).
        case slotFault = "slot-fault"
        /// A slot stopped because its next item is past its shelf life (`on` true, with `count`
        /// expired items and `since`), or sells again (`on` false: unloaded, or allowed by the file).
        case stockExpired = "stock-expired"
        /// A technician unloaded expired items: `count` discarded, `amount` their value at the
        /// slot's price.
        case stockDiscarded = "stock-discarded"
        /// A technician emptied the cash box: `collection` its number, `coins` and `bills` what
        /// the machine counted into it per denomination since the previous one (`since`; absent
        /// for the first), `amount` their total, `reason` who collected it.
        case cashCollected = "cash-collected"
        /// An age-restricted selection's check: `slot`, `count` the age asked, `reason` what
        /// happened (started, approved, used, timed-out, cancelled, restarted, reloaded, and from a
        /// reader that checks, too-young, no-age, verifier-lost).
        case ageCheck = "age-check"
    }

    /// cash-collected: how many of one coin or bill value the cash box took.
    public struct Denomination: Codable, Sendable, Hashable {
        public let value: String
        public let count: Int

        public init(value: String, count: Int) {
            self.value = value
            self.count = count
        }
    }

    public let id: String
    /// The machine's sequence number; nil only in what a vendd older than sequences wrote (the
    /// outbox numbers those once when it restores them).
    public var seq: UInt64? = nil
    public let machine: String
    /// Milliseconds since the Unix epoch, by the machine's clock.
    public let at: Int64
    public let type: Kind
    public let currency: String
    public var amount: String? = nil
    public var credit: String? = nil
    public var slot: String? = nil
    public var product: String? = nil
    /// The machine's vend number.
    public var vend: UInt64? = nil
    /// The machine's payout number (payout-started, payout-ended).
    public var payout: UInt64? = nil
    /// payout-ended: what may or may not have left the machine (a device that lost its counters).
    public var unknown: String? = nil
    /// vend-ended: "sold" (confirmed or assumed) or the failure ("not-dropped", "unknown", …).
    public var outcome: String? = nil
    /// How a sale was paid: `cash`, `cashless1`, `cashless2` (free-vend and test cards: `free-cashless1`…).
    public var payment: String? = nil
    public var stock: Int? = nil
    /// stock-changed: "restock", "sale", …; payout-started: "change", "coin-return", "failed-vend",
    /// "test" (also on a test's payout-ended); fault: what is wrong.
    public var reason: String? = nil
    /// service-mode, exact-change-only, fill-mode: on or off.
    public var on: Bool? = nil
    /// health-lock: the temperature zone.
    public var zone: String? = nil
    /// stock-expired: the slot's expired items; stock-discarded: the items discarded.
    public var count: Int? = nil
    /// stock-expired: when the slot's next item expired; cash-collected: when the previous
    /// collection was made. In milliseconds since the Unix epoch.
    public var since: Int64? = nil
    /// cash-collected: the machine's collection number (1, 2, 3…).
    public var collection: UInt64? = nil
    /// cash-collected: the coins the cash box took, per value, smallest first.
    public var coins: [Denomination]? = nil
    /// cash-collected: the bills the stacker took, per value, smallest first.
    public var bills: [Denomination]? = nil

    public init(id: String, machine: String, at: Int64, type: Kind, currency: String) {
        self.id = id
        self.machine = machine
        self.at = at
        self.type = type
        self.currency = currency
    }
}

/// Retained on `<prefix>/<machine>/state`; the last will sets `online: false`.
public struct MachineStateMessage: Codable, Sendable, Equatable {
    public let machine: String
    public let online: Bool
    /// "in-service", "service-mode", "out-of-order", or "offline" (last will).
    public let state: String
    public let reason: String?
    public let credit: String?
    public let currency: String?
    /// When the machine published this, in milliseconds since the Unix epoch (absent in the will).
    public var at: Int64?
    /// Events waiting in the machine's outbox for their acknowledgement; absent without events
    /// kept (and in the will, and from older machines). Sent again when its order of magnitude
    /// changes (`OutboxBacklog`), not at every event.
    public var outbox: Int?
    /// The machine's DEX port and when its audit was last read; absent without a DEX port.
    public var dex: DEXAudit?

    public struct DEXAudit: Codable, Sendable, Equatable {
        /// Milliseconds since the Unix epoch; absent: never read.
        public var lastReadAt: Int64?

        public init(lastReadAt: Int64?) { self.lastReadAt = lastReadAt }
    }

    public init(machine: String, online: Bool, state: String, reason: String?, credit: String?, currency: String?, at: Int64? = nil) {
        self.machine = machine
        self.online = online
        self.state = state
        self.reason = reason
        self.credit = credit
        self.currency = currency
        self.at = at
    }
}

/// How a machine's outbox appears in its retained state: the count as it is, but only its order
/// of magnitude decides whether the state is sent again. Up to 9 waiting is a moment's traffic
/// (an event between sending and its acknowledgement); 10, 100, 1,000… is a backlog growing or
/// draining, which the operator's alert follows without a retained message per event.
public enum OutboxBacklog {
    public static func magnitude(_ waiting: Int) -> Int {
        var bound = 10
        var order = 0
        while waiting >= bound, bound < Int.max / 10 {
            order += 1
            bound *= 10
        }
        return order
    }
}

/// Retained on `<prefix>/<machine>/stock`.
public struct StockMessage: Codable, Sendable, Equatable {
    public struct Slot: Codable, Sendable, Equatable {
        public let slot: String
        public let product: String
        public let price: String
        public let available: Int
        public let stock: Int
        public let capacity: Int
        /// Milliseconds since the Unix epoch; absent when the slot holds nothing that expires.
        public let earliestExpiry: Int64?
        /// The motor fault that keeps the slot out of service until a technician clears it
        /// (`jammed`, `motor-missing`, `away-from-home`); absent while it has none.
        public var fault: String? = nil
        /// The temperature zone whose food-safety lock stops the slot's sales; absent otherwise.
        public var healthLock: String? = nil
        /// The slot's prices besides `price` (list 1 for every payment), as the machine charges
        /// them: its own lines (set at run time, else the file's) before its product's, by list
        /// and payment; absent without any.
        public var priceLines: [PriceLine]? = nil

        public init(slot: String, product: String, price: String, available: Int, stock: Int, capacity: Int, earliestExpiry: Int64?) {
            self.slot = slot
            self.product = product
            self.price = price
            self.available = available
            self.stock = stock
            self.capacity = capacity
            self.earliestExpiry = earliestExpiry
        }
    }

    /// One price of a slot: on `list` (1 to 999), for `payment` (`any`, `cash`, `cashless`,
    /// `cashless1`, `cashless2`), an exact decimal `price`.
    public struct PriceLine: Codable, Sendable, Equatable {
        public let list: Int
        public let payment: String
        public let price: String

        public init(list: Int, payment: String, price: String) {
            self.list = list
            self.payment = payment
            self.price = price
        }
    }

    /// A list besides list 1 and the name the technician gave it.
    public struct PriceList: Codable, Sendable, Equatable {
        public let list: Int
        public let name: String

        public init(list: Int, name: String) {
            self.list = list
            self.name = name
        }
    }

    /// A time band in the machine's local time, as its file gives it: the days it starts on
    /// (`sun`…`sat`), `HH:MM` to `HH:MM` (`to` at or before `from` ends on the next day; `24:00`
    /// is midnight at the end of the day).
    public struct Band: Codable, Sendable, Equatable {
        public let list: Int
        public let days: [String]
        public let from: String
        public let to: String

        public init(list: Int, days: [String], from: String, to: String) {
            self.list = list
            self.days = days
            self.from = from
            self.to = to
        }
    }

    public let machine: String
    public let currency: String
    public let slots: [Slot]
    /// The machine's lists besides list 1; absent without any.
    public var priceLists: [PriceList]? = nil
    /// When the lists are in force; absent without any.
    public var bands: [Band]? = nil
    /// When this was sent; not part of what makes the message change.
    public var at: Int64? = nil

    public init(machine: String, currency: String, slots: [Slot]) {
        self.machine = machine
        self.currency = currency
        self.slots = slots
    }
}

/// Retained on `<prefix>/<machine>/cash`: the books since the machine was new.
public struct CashMessage: Codable, Sendable, Equatable {
    public let machine: String
    public let currency: String
    public let coinsIn: String
    public let sales: String
    public let refunds: String
    public var billsIn: String? = nil
    public var changePaid: String? = nil
    /// Payouts nobody can tell were paid: the technician counts the devices.
    public var unknownPayouts: String? = nil
    /// What the payout devices hold, one entry per coin value.
    public var changeStock: [ChangeLevel]? = nil
    public var exactChangeOnly: Bool? = nil
    /// What the card readers charged for sales, by reader (`cashless1`, `cashless2`); absent
    /// without card sales. `sales` is cash only.
    public var cardSales: [String: String]? = nil
    /// What the cash box took since the last collection (coins not routed to the tubes, bills).
    public var cashBox: String? = nil
    /// When this was sent; not part of what makes the message change.
    public var at: Int64? = nil

    public struct ChangeLevel: Codable, Sendable, Equatable {
        public let value: String
        /// Absent when a device holding this coin cannot count (a hopper without level sensors).
        public let count: Int?

        public init(value: String, count: Int?) {
            self.value = value
            self.count = count
        }
    }

    public init(machine: String, currency: String, coinsIn: String, sales: String, refunds: String) {
        self.machine = machine
        self.currency = currency
        self.coinsIn = coinsIn
        self.sales = sales
        self.refunds = refunds
    }
}

/// Retained on `<prefix>/<machine>/zones/<zone>`: one temperature zone as `vendctl status` shows
/// it. Temperatures are exact decimal degrees Celsius ("4.5"), instants milliseconds since the epoch.
public struct ZoneMessage: Codable, Sendable, Equatable {
    public let machine: String
    public let zone: String
    /// cold, hot or ambient.
    public let kind: String
    /// Absent while the sensors give none (`sensorFault` says why).
    public var temperature: String? = nil
    public var sensorFault: String? = nil
    public var setPoint: String? = nil
    /// The compressor (cold) or heater (hot); absent for a zone without one.
    public var relayOn: Bool? = nil
    /// `ok`, `past-limit` (an excursion under way, not yet tripped) or `locked` (until serviced).
    public let health: String
    /// The worst temperature of the excursion or lock, and since when it has lasted.
    public var maxReached: String? = nil
    public var since: Int64? = nil
    /// Why the zone locked.
    public var cause: String? = nil
    /// When this was sent; not part of what makes the message change.
    public var at: Int64? = nil

    public init(machine: String, zone: String, kind: String, health: String) {
        self.machine = machine
        self.zone = zone
        self.kind = kind
        self.health = health
    }
}

/// Retained, QoS 1, on `<prefix>/<machine>/stored` by the fleet store: every event of the machine
/// with a sequence up to `seq` is committed (0: none yet). Other fields (`at`) are informative.
public struct StoredAcknowledgement: Codable, Sendable, Equatable {
    public let seq: UInt64
    /// When the store published this, in milliseconds since the Unix epoch.
    public var at: Int64? = nil

    public init(seq: UInt64, at: Int64? = nil) {
        self.seq = seq
        self.at = at
    }
}

/// The topic tree, in one place for vendd, vendfleet and the tests.
public struct FleetTopics: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String) { self.prefix = prefix }

    public func machine(_ id: String) -> String { "\(prefix)/\(id)" }
    public func event(_ machine: String, _ kind: TelemetryEvent.Kind) -> String { "\(prefix)/\(machine)/events/\(kind.rawValue)" }
    /// Several events sent late in one message, for the fleet store (`EventBatch`).
    public func backlog(_ machine: String) -> String { "\(prefix)/\(machine)/backlog" }
    public func state(_ machine: String) -> String { "\(prefix)/\(machine)/state" }
    public func stock(_ machine: String) -> String { "\(prefix)/\(machine)/stock" }
    public func cash(_ machine: String) -> String { "\(prefix)/\(machine)/cash" }
    public func zone(_ machine: String, _ zone: String) -> String { "\(prefix)/\(machine)/zones/\(zone)" }
    public func commands(_ machine: String) -> String { "\(prefix)/\(machine)/cmd/+" }
    /// Retained by the fleet store: the highest contiguous sequence it has committed.
    public func stored(_ machine: String) -> String { "\(prefix)/\(machine)/stored" }
    public func reply(_ machine: String) -> String { "\(prefix)/\(machine)/reply" }
    /// The command named by a topic of `commands(machine)`, if it is one.
    public func commandName(in topic: String, machine: String) -> String? {
        let head = "\(prefix)/\(machine)/cmd/"
        guard topic.hasPrefix(head) else { return nil }
        let name = topic.dropFirst(head.count)
        return name.isEmpty || name.contains("/") ? nil : String(name)
    }
}
