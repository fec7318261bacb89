/// One event as the store keeps it. `machine` comes from the topic the event arrived on, never
/// from its payload: the broker's ACL lets a machine write only under its own id.
public struct IncomingEvent: Sendable, Equatable {
    public let machine: String
    /// The machine's sequence number: from 1, contiguous, never reused (docs/mqtt.md).
    public let seq: Int64
    /// The event's UUID; a resend carries the same one.
    public let id: String
    public let type: String
    /// Milliseconds since the Unix epoch, by the machine's clock.
    public let at: Int64
    /// The JSON object as received.
    public let payload: String
    /// A `cash-collected` event's collection, read into columns; nil for every other type.
    public let collection: CollectionColumns?
    /// A sold `vend-ended` event's sale, read from the payload; nil for every other event.
    public let sale: SaleColumns?

    public init(machine: String, seq: Int64, id: String, type: String, at: Int64, payload: String, collection: CollectionColumns? = nil) {
        self.machine = machine
        self.seq = seq
        self.id = id
        self.type = type
        self.at = at
        self.payload = payload
        self.collection = collection
        sale = SaleColumns(type: type, payload: payload)
    }

    var key: EventKey { EventKey(machine: machine, seq: seq) }
}

/// A machine's latest retained message: `state`, `stock`, `cash` or `zones/<zone>`, and what
/// it says as columns (nil: only the payload is kept).
public struct RetainedUpdate: Sendable, Equatable {
    public let machine: String
    public let subject: String
    public let payload: String
    public let columns: RetainedColumns?

    public init(machine: String, subject: String, payload: String, columns: RetainedColumns? = nil) {
        self.machine = machine
        self.subject = subject
        self.payload = payload
        self.columns = columns
    }
}

struct EventKey: Hashable, Sendable {
    let machine: String
    let seq: Int64
}

/// A different event offered under a (machine, seq) the store already holds: kept as it was.
public struct EventConflict: Sendable, Equatable {
    public let machine: String
    public let seq: Int64
    public let storedID: String
    public let offeredID: String

    public init(machine: String, seq: Int64, storedID: String, offeredID: String) {
        self.machine = machine
        self.seq = seq
        self.storedID = storedID
        self.offeredID = offeredID
    }
}

/// An event the store would not take, and why (logged by the caller with the machine).
public struct RefusedEvent: Sendable, Equatable {
    public let event: IncomingEvent
    public let reason: String
}

/// What one batch did. `acknowledgements` holds, for every machine in the batch, the highest
/// contiguous sequence now durable: what the `stored` topic announces.
public struct CommitOutcome: Sendable, Equatable {
    public var acknowledgements: [String: Int64] = [:]
    public var inserted = 0
    public var duplicates = 0
    public var conflicts: [EventConflict] = []
    public var refused: [RefusedEvent] = []
}

/// Where a machine's sequence stands: everything up to `contiguous` is held; `highest` is the
/// highest held at all (above `contiguous` only while there is a gap).
public struct MachineProgress: Sendable, Equatable {
    public let machine: String
    public let contiguous: Int64
    public let highest: Int64
    /// Milliseconds since the Unix epoch of the last commit that touched the machine.
    public let updatedAt: Int64
}

/// Sequences missing while later ones are held: `first...last` of `machine`.
public struct SequenceGap: Sendable, Equatable {
    public let machine: String
    public let first: Int64
    public let last: Int64
    /// When the commit that last saw the gap happened (ms since the Unix epoch).
    public let seenAt: Int64

    public init(machine: String, first: Int64, last: Int64, seenAt: Int64) {
        self.machine = machine
        self.first = first
        self.last = last
        self.seenAt = seenAt
    }
}

/// An event as stored, with when its batch was committed.
public struct StoredEvent: Sendable, Equatable {
    public let machine: String
    public let seq: Int64
    public let id: String
    public let type: String
    public let at: Int64
    public let payload: String
    public let receivedAt: Int64
}

public struct FleetStoreError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// The fleet's history: every machine's events exactly once, by (machine, seq), and each machine's
/// latest retained messages. One schema (docs/fleet-store.md) on SQLite or PostgreSQL.
public protocol FleetStore: AnyObject {
    /// Commits the batch in one transaction: events idempotently (a resend is a duplicate, a
    /// different id under a held sequence a conflict, neither overwrites), the retained messages
    /// (latest wins), each machine's contiguous mark and gaps. Returns after the commit is durable.
    /// On a throw nothing of the batch is stored.
    func commit(events: [IncomingEvent], retained: [RetainedUpdate], receivedAt: Int64) throws -> CommitOutcome
    /// The engine and where it is, for logs and status: never a password.
    var name: String { get }
    /// The schema versions this opening applied (none when the database was up to date).
    var migrationsApplied: [Int] { get }
    func progress() throws -> [MachineProgress]
    func gaps() throws -> [SequenceGap]
    /// A machine's events from `seq` on, in sequence order, at most `limit`.
    func events(of machine: String, from seq: Int64, limit: Int) throws -> [StoredEvent]
    /// A machine's latest retained messages by subject (`state`, `stock`, `cash`, `zones/<zone>`).
    func latest(of machine: String) throws -> [String: String]
    /// A machine's slots from its latest `stock` message, by slot.
    func slots(of machine: String) throws -> [SlotPosition]
    /// A machine's books from its latest `cash` message; nil before any.
    func cash(of machine: String) throws -> CashPosition?
    /// A machine's zones from their latest messages, by zone.
    func zones(of machine: String) throws -> [ZonePosition]
    /// A machine's cash box collections, oldest first, each with the driver's count if entered.
    func collections(of machine: String) throws -> [CollectionRecord]
    /// Records what the route driver counted for the collection stored as `seq` of `machine`,
    /// replacing an earlier entry (a correction); throws if no such collection is stored.
    func recordCount(machine: String, seq: Int64, counted: CountedCollection) throws
}
