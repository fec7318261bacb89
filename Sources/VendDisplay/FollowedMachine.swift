import VendControl

/// Something the display tells the customer for a few seconds, over the normal guidance.
/// Products are named by id: each output picks the name it can show.
public enum Notice: Sendable, Equatable {
    case takeItem(product: String)
    /// The vend dropped nothing; the credit was given back (`failed_vend: keep-credit`).
    case jam
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
    case nothingToReturn
    case busy
    /// The card reader (the bank) declined the card vend.
    case cardDenied
    /// vendd refused for a reason the display has no words of its own for: its sentence, as is.
    case refused(String)
}

/// What the display knows of the machine: vendd's latest status (nil while it cannot be reached),
/// this customer's purchases, the current notice. Changed only by the follower, one event at a
/// time; the outputs render it through `MachineView`.
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

    /// What one event of `vendctl watch` changes before the status is read again.
    public mutating func observe(kind: String, at now: Int64) {
        switch kind {
        case "coin":
            lastActivity = now
            // A new coin is a new action: whatever the last notice said is over.
            notice = nil
        case "vend-failed":
            lastActivity = now
            post(.jam, at: now)
        case "vend-started", "card-session", "card-vend":
            lastActivity = now
            notice = nil
        case "card-denied":
            lastActivity = now
            post(.cardDenied, at: now)
        default:
            break
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
        // Amounts are exact decimal text: "0", "0.00".
        let creditLeft = status?.credit.contains { $0 != "0" && $0 != "." } ?? false
        if !bought.isEmpty, !creditLeft, status?.vendInProgress == nil, now - lastActivity >= Self.sessionIdleMilliseconds {
            bought.removeAll()
        }
    }
}
