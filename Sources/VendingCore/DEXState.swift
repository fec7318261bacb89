/// What the machine keeps about its DEX port between reads (EVA-DTS 6.1.1): how a read resets the
/// interval figures (SD105) and the events (SD106), the reads and resets counted since
/// initialisation (EA3), and the DDCMP security and pass code (§6.1.6). Journaled and saved with
/// the machine, like the interim base: a restart forgets none of it.
public struct DEXState: Hashable, Sendable, Codable {
    /// SD105 for the interval data, SD106 for the events. AUTO "will be the default state for
    /// vending machine devices" (§2.6.1, p.42).
    public internal(set) var intervalMode: DEXResetMode = .auto
    public internal(set) var eventMode: DEXResetMode = .auto
    /// EA309: reads "with or without reset", completed (acknowledged to the end).
    public internal(set) var reads = 0
    /// EA301: of `reads`, those that reset the interval figures.
    public internal(set) var readsWithReset = 0
    /// EA310: resets of the interval figures, by a read or by an SD105 RESET ("Not Event Resets").
    public internal(set) var resets = 0
    /// The last completed read: EA305–EA307 of the next audit.
    public internal(set) var lastRead: DEXReadRecord?
    /// The 4-byte security and pass code (S2 S1 P2 P1), once learnt; nil: zero, "a zero value
    /// grants access on every requested code" (§6.1.6, p.178).
    public internal(set) var passCode: [UInt8]?

    public init() {}

    /// Whether `code` may read: any code while none is kept, then only the kept one (§6.1.6).
    public func admits(_ code: [UInt8]) -> Bool {
        guard let passCode else { return true }
        return passCode == code
    }
}

/// SD105/SD106's modes (§2.6.1, §2.8.2): AUTO resets after each successful read, SAVE does not.
public enum DEXResetMode: String, Hashable, Sendable, Codable {
    case auto = "AUTO"
    case save = "SAVE"
}

/// What a handheld's SD105 or SD106 asks: a mode, or RESET ("a command … All interval data will
/// be reset after the current successful SD105 transfer. Sending RESET does not change the AUTO
/// or SAVE mode", p.42).
public enum DEXResetCommand: String, Hashable, Sendable, Codable {
    case auto = "AUTO"
    case save = "SAVE"
    case reset = "RESET"
}

/// A read that reached its handheld whole.
public struct DEXReadRecord: Hashable, Sendable, Codable {
    public let at: Instant
    /// Who read: the handheld's communication ID (DEX/UCS) or user ID (DDCMP).
    public let terminal: String

    public init(at: Instant, terminal: String) {
        self.at = at
        self.terminal = terminal
    }
}

/// A read acknowledged to its end, as the DEX port reports it to the machine.
public struct DEXRead: Hashable, Sendable, Codable {
    /// The whole-life totals the audit on the wire held: the interim base if the read resets.
    public let totals: AuditTotals
    public let terminal: String
    /// False for a read that never resets (DDCMP's security read, list 2).
    public let mayReset: Bool

    public init(totals: AuditTotals, terminal: String, mayReset: Bool) {
        self.totals = totals
        self.terminal = terminal
        self.mayReset = mayReset
    }
}

extension Machine {
    /// A read reached its handheld whole: counted (EA309), remembered (EA305–307), and, as SD105
    /// and SD106 say, the interval figures and the events reset to what it held. Totals that do
    /// not follow the books and the base are counted as a read but reset nothing.
    mutating func recordDEXRead(_ read: DEXRead, at now: Instant, into effects: inout Effects) {
        dex.reads += 1
        dex.lastRead = DEXReadRecord(at: now, terminal: read.terminal)
        guard read.mayReset, dex.intervalMode == .auto || dex.eventMode == .auto else { return }
        guard AuditTotals(ledger).covers(read.totals), read.totals.covers(interimBase) else {
            return effects.reject(.staleAuditRead)
        }
        rebase(on: read.totals, interval: dex.intervalMode == .auto, events: dex.eventMode == .auto)
        if dex.intervalMode == .auto {
            dex.readsWithReset += 1
            dex.resets += 1
        }
    }

    /// A handheld's configuration carried SD105 and/or SD106: modes kept, RESET carried out now
    /// (the configuration's transfer has completed when this input comes).
    mutating func applyDEXResetControl(interval: DEXResetCommand?, events: DEXResetCommand?) {
        if let mode = interval.flatMap({ DEXResetMode(rawValue: $0.rawValue) }) { dex.intervalMode = mode }
        if let mode = events.flatMap({ DEXResetMode(rawValue: $0.rawValue) }) { dex.eventMode = mode }
        let resetInterval = interval == .reset, resetEvents = events == .reset
        guard resetInterval || resetEvents else { return }
        rebase(on: auditTotals, interval: resetInterval, events: resetEvents)
        if resetInterval { dex.resets += 1 }
    }

    /// The interim base becomes `totals` for the interval figures, the events, or both.
    private mutating func rebase(on totals: AuditTotals, interval: Bool, events: Bool) {
        let old = interimBase
        var base = interval ? totals : old
        base.incidents = events ? totals.incidents : old.incidents
        lastAuditRead = base
    }
}
