import VendControl
import VendingCore

/// Something the display tells the customer for a few seconds, over the normal guidance.
/// Products are named by id: each output picks the name it can show.
public enum Notice: Sendable, Equatable {
    case takeItem(product: String)
    /// The vend dropped nothing; the credit was given back (`failed_vend: keep-credit`).
    case jam
    /// A card vend dropped nothing: no credit to keep, the reader is told and refunds the card.
    case cardJam
    case soldOut(product: String)
    /// A temperature zone's health lock stops the product's sales until a technician services it.
    case notAvailable(product: String)
    /// A motor fault took the product's slot out of service until a technician clears it.
    case outOfService(product: String)
    /// A tap on a product the credit does not cover: `missing` is the price minus the credit.
    case insertMore(product: String, missing: String)
    /// Coin return on a machine that cannot pay out (`payout: none`).
    case noChange
    case refunded(amount: String)
    /// vendd paid change after a sale (the payout devices' own count, from the books).
    case change(amount: String)
    /// A sale and its change, told together: the customer takes both.
    case takeItemAndChange(product: String, change: String)
    case nothingToReturn
    case busy
    /// The card reader (the bank) declined the card vend.
    case cardDenied
    /// A restricted selection's age check timed out or was cancelled (or vendd restarted).
    case ageCheckEnded
    /// A restricted selection on a machine with no age verifier.
    case ageNoVerifier
    /// vendd refused for a reason the display has no words of its own for: its sentence, as is.
    case refused(String)
}

/// What the display knows of the machine: vendd's latest status (nil while it cannot be reached),
/// this customer's purchases, the current notice. Changed only by the follower, one event at a
/// time; the outputs render it through `MachineView`.
///
/// A customer's session, for the bought strip: it starts with the first coin, bill or card
/// session that finds the machine holding nothing of anyone's (no credit, no card session, no
/// vend or payout in flight) — the strip is then cleared, whatever an earlier customer bought.
/// It ends when the credit is spent or paid back; the strip stays up for the customer walking
/// away, and goes after a quiet `sessionIdleMilliseconds` at the latest. (Someone who buys with
/// exact money and then puts in more starts a new strip: the machine cannot tell them apart
/// from the next customer.)
public struct FollowedMachine: Sendable, Equatable {
    public struct TimedNotice: Sendable, Equatable {
        public let notice: Notice
        /// Milliseconds since the Unix epoch.
        public let until: Int64
    }

    public var status: StatusReport?
    /// The sales of this customer's session, oldest first: shown below the grid.
    public private(set) var bought: [HistoryReport.Sale] = []
    public private(set) var notice: TimedNotice?
    /// Shown on the technician's screen; fetched while the service key is on.
    public var sales: SalesReport?
    /// When the customer last did something (a coin, a sale): the session ends after a quiet while.
    private var lastActivity: Int64 = 0
    /// The vend under way is paid by card (a `card-vend` came after its selection).
    private var cardVendUnderWay = false

    /// How long a notice stays up.
    public static let noticeMilliseconds: Int64 = 8_000
    /// A session ends this long after its last coin or sale once no credit is left: the bought
    /// strip is the customer's, not the next one's.
    public static let sessionIdleMilliseconds: Int64 = 45_000

    public init() {}

    public var isConnected: Bool { status != nil }

    public mutating func post(_ notice: Notice, at now: Int64) {
        self.notice = TimedNotice(notice: notice, until: now + Self.noticeMilliseconds)
    }

    /// What one event of `vendctl watch` changes before the status is read again: `status` is
    /// still the machine as it was before the event.
    public mutating func observe(kind: String, at now: Int64) {
        switch kind {
        case "coin", "bill":
            if holdsNothing { bought.removeAll() }
            lastActivity = now
            // A new coin is a new action: whatever the last notice said is over.
            notice = nil
        case "card-session":
            // Began (a card presented) or ended: only a beginning finds no session open.
            if holdsNothing { bought.removeAll() }
            lastActivity = now
            notice = nil
        case "vend-failed":
            lastActivity = now
            post(cardVendUnderWay ? .cardJam : .jam, at: now)
            cardVendUnderWay = false
        case "vend-started", "card-vend":
            lastActivity = now
            notice = nil
            cardVendUnderWay = kind == "card-vend"
        case "card-denied":
            lastActivity = now
            post(.cardDenied, at: now)
        case "age-check-ended":
            lastActivity = now
            post(.ageCheckEnded, at: now)
        default:
            break
        }
    }

    /// No credit, no card session, no vend or payout in flight: the next money is a new customer's.
    /// Not while vendd cannot be reached (nothing is known).
    var holdsNothing: Bool {
        guard let status else { return false }
        return !Self.isNonZero(status.credit) && status.cardSession == nil && status.vendInProgress == nil
            && status.payoutInProgress == nil
    }

    /// Amounts are exact decimal text: "0", "0.00".
    static func isNonZero(_ amount: String) -> Bool { amount.contains { $0 != "0" && $0 != "." } }

    /// vendd's status as just read (nil: vendd cannot be reached). What the payout devices paid
    /// since the last one is told to the customer: change after a sale (with the item, when its
    /// notice is still up), or money paid back. Both come from vendd's books, so the page says
    /// what was paid, not what was asked for.
    public mutating func update(status new: StatusReport?, sales: SalesReport?, currency: Currency, at now: Int64) {
        defer {
            status = new
            self.sales = sales
        }
        guard let old = status, let new else { return }
        func increase(_ before: String?, _ after: String?) -> Money? {
            guard let before, let after, let from = try? Money(parsing: before, currency: currency),
                let to = try? Money(parsing: after, currency: currency), to > from
            else { return nil }
            return to - from
        }
        if let change = increase(old.books.changePaid, new.books.changePaid) {
            lastActivity = now
            if case .takeItem(let product)? = notice?.notice {
                post(.takeItemAndChange(product: product, change: change.decimalString), at: now)
            } else {
                post(.change(amount: change.decimalString), at: now)
            }
        }
        if let refund = increase(old.books.refunds, new.books.refunds) {
            lastActivity = now
            post(.refunded(amount: refund.decimalString), at: now)
        }
    }

    /// A completed sale (read from `history` after a `vend-completed` event).
    public mutating func sold(_ sale: HistoryReport.Sale, at now: Int64) {
        lastActivity = now
        if !bought.contains(where: { $0.vend == sale.vend }) { bought.append(sale) }
        post(.takeItem(product: sale.product), at: now)
    }

    /// Called every second: notices expire, an idle session without credit ends.
    public mutating func tick(at now: Int64) {
        if let notice, notice.until <= now { self.notice = nil }
        let creditLeft = status.map { Self.isNonZero($0.credit) } ?? false
        if !bought.isEmpty, !creditLeft, status?.vendInProgress == nil, now - lastActivity >= Self.sessionIdleMilliseconds {
            bought.removeAll()
        }
    }
}
