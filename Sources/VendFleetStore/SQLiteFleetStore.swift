/// The store in one SQLite file: one operator, one box, nothing to install.
///
/// WAL with `synchronous=FULL`: the `stored` acknowledgement tells vendd it may forget the
/// events, so a commit must survive a power cut, not only a crash of vendstore. With NORMAL a
/// WAL commit is not fsynced and the last transactions can vanish at a power cut, after their
/// acknowledgement went out. FULL costs one fsync per batch, which batching amortises.
public final class SQLiteFleetStore: FleetStore {
    private let database: SQLiteDatabase
    private let maxAhead: Int64
    private let statements: Statements
    /// The sales tables' upserts, prepared at their first use.
    private var salesStatements: [String: SQLiteStatement] = [:]
    public let migrationsApplied: [Int]
    public let name: String

    /// The prepared statements, made once.
    private struct Statements {
        let selectState: SQLiteStatement
        let insertEvent: SQLiteStatement
        let selectID: SQLiteStatement
        let selectAbove: SQLiteStatement
        let upsertState: SQLiteStatement
        let deleteGaps: SQLiteStatement
        let insertGap: SQLiteStatement
        let upsertLatest: SQLiteStatement
        let deleteSlots: SQLiteStatement
        let insertSlot: SQLiteStatement
        let upsertCash: SQLiteStatement
        let upsertZone: SQLiteStatement
        let upsertReading: SQLiteStatement
        let pruneReadings: SQLiteStatement
        let insertCollection: SQLiteStatement
        let insertDenomination: SQLiteStatement

        init(_ database: SQLiteDatabase) throws {
            selectState = try database.prepare("SELECT contiguous, highest FROM machine_progress WHERE machine = ?")
            insertEvent = try database.prepare(
                "INSERT INTO events (machine, seq, id, type, at, payload, received_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (machine, seq) DO NOTHING"
            )
            selectID = try database.prepare("SELECT id FROM events WHERE machine = ? AND seq = ?")
            selectAbove = try database.prepare("SELECT seq FROM events WHERE machine = ? AND seq > ? ORDER BY seq")
            upsertState = try database.prepare(
                """
                INSERT INTO machine_progress (machine, contiguous, highest, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (machine) DO UPDATE SET contiguous = excluded.contiguous, highest = excluded.highest, updated_at = excluded.updated_at
                """)
            deleteGaps = try database.prepare("DELETE FROM gaps WHERE machine = ?")
            insertGap = try database.prepare("INSERT INTO gaps (machine, first_seq, last_seq, seen_at) VALUES (?, ?, ?, ?)")
            upsertLatest = try database.prepare(
                """
                INSERT INTO machine_latest (machine, subject, payload, received_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (machine, subject) DO UPDATE SET payload = excluded.payload, received_at = excluded.received_at
                """)
            deleteSlots = try database.prepare("DELETE FROM machine_slots WHERE machine = ?")
            insertSlot = try database.prepare(
                """
                INSERT INTO machine_slots (machine, slot, product, price, currency, available, stock, capacity, earliest_expiry, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            upsertCash = try database.prepare(
                """
                INSERT INTO machine_cash (machine, currency, coins_in, sales, refunds, bills_in, change_paid, unknown_payouts, exact_change_only, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (machine) DO UPDATE SET \(PositionColumns.overwrite(PositionColumns.cash))
                """)
            upsertZone = try database.prepare(
                """
                INSERT INTO machine_zones (machine, zone, kind, health, temperature, sensor_fault, set_point, relay_on, max_reached, since, cause, at, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (machine, zone) DO UPDATE SET \(PositionColumns.overwrite(PositionColumns.zone))
                """)
            upsertReading = try database.prepare(ZoneReadings.upsert)
            pruneReadings = try database.prepare(ZoneReadings.prune)
            insertCollection = try database.prepare(
                """
                INSERT INTO collections (machine, seq, collection, at, since, currency, total, collected_by, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (machine, seq) DO NOTHING
                """)
            insertDenomination = try database.prepare(
                "INSERT INTO collection_denominations (machine, seq, kind, value, count) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        }
    }

    /// Opens (creating if needed) the file and applies the missing migrations.
    /// `maxAhead`: how far past a machine's contiguous mark a sequence is believed.
    public init(path: String, maxAhead: Int64 = 1_000_000, now: Int64) throws {
        name = "sqlite \(path)"
        let (database, applied) = try SQLiteDatabase.openFleet(path: path, now: now)
        migrationsApplied = applied
        statements = try Statements(database)
        self.database = database
        self.maxAhead = maxAhead
    }

    public func commit(events: [IncomingEvent], retained: [RetainedUpdate], receivedAt: Int64) throws -> CommitOutcome {
        try CommitProcedure.run(self, events: events, retained: retained, receivedAt: receivedAt, maxAhead: maxAhead)
    }

    public func progress() throws -> [MachineProgress] {
        try database.prepare("SELECT machine, contiguous, highest, updated_at FROM machine_progress ORDER BY machine").rows([]) {
            MachineProgress(machine: $0.text(0), contiguous: $0.integer(1), highest: $0.integer(2), updatedAt: $0.integer(3))
        }
    }

    public func gaps() throws -> [SequenceGap] {
        try database.prepare("SELECT machine, first_seq, last_seq, seen_at FROM gaps ORDER BY machine, first_seq").rows([]) {
            SequenceGap(machine: $0.text(0), first: $0.integer(1), last: $0.integer(2), seenAt: $0.integer(3))
        }
    }

    public func events(of machine: String, from seq: Int64, limit: Int) throws -> [StoredEvent] {
        try database.prepare(
            "SELECT machine, seq, id, type, at, payload, received_at FROM events WHERE machine = ? AND seq >= ? ORDER BY seq LIMIT ?"
        ).rows([.text(machine), .integer(seq), .integer(Int64(limit))]) {
            StoredEvent(
                machine: $0.text(0), seq: $0.integer(1), id: $0.text(2), type: $0.text(3), at: $0.integer(4), payload: $0.text(5),
                receivedAt: $0.integer(6))
        }
    }

    public func latest(of machine: String) throws -> [String: String] {
        let rows = try database.prepare("SELECT subject, payload FROM machine_latest WHERE machine = ?").rows([.text(machine)]) {
            ($0.text(0), $0.text(1))
        }
        return Dictionary(rows) { $1 }
    }

    public func slots(of machine: String) throws -> [SlotPosition] {
        try database.prepare(
            "SELECT slot, product, price, available, stock, capacity, earliest_expiry FROM machine_slots WHERE machine = ? ORDER BY slot"
        ).rows([.text(machine)]) {
            SlotPosition(
                slot: $0.text(0), product: $0.text(1), price: $0.text(2), available: $0.integer(3), stock: $0.integer(4), capacity: $0.integer(5),
                earliestExpiry: $0.optionalInteger(6))
        }
    }

    public func cash(of machine: String) throws -> CashPosition? {
        try database.prepare(
            "SELECT currency, coins_in, sales, refunds, bills_in, change_paid, unknown_payouts, exact_change_only FROM machine_cash WHERE machine = ?"
        ).rows([.text(machine)]) {
            CashPosition(
                currency: $0.text(0), coinsIn: $0.text(1), sales: $0.text(2), refunds: $0.text(3), billsIn: $0.optionalText(4),
                changePaid: $0.optionalText(5), unknownPayouts: $0.optionalText(6), exactChangeOnly: $0.optionalInteger(7).map { $0 != 0 })
        }.first
    }

    public func collections(of machine: String) throws -> [CollectionRecord] {
        try CollectionBook(SQLiteFleetSQL(database)).collections(of: machine)
    }

    public func recordCount(machine: String, seq: Int64, counted: CountedCollection) throws {
        let sql = SQLiteFleetSQL(database)
        try sql.transaction { try CollectionBook(sql).recordCount(machine: machine, seq: seq, counted: counted) }
    }

    public func zones(of machine: String) throws -> [ZonePosition] {
        try database.prepare(
            "SELECT zone, kind, health, temperature, sensor_fault, set_point, relay_on, max_reached, since, cause, at FROM machine_zones WHERE machine = ? ORDER BY zone"
        ).rows([.text(machine)]) {
            ZonePosition(
                zone: $0.text(0), kind: $0.text(1), health: $0.text(2), temperature: $0.optionalText(3), sensorFault: $0.optionalText(4),
                setPoint: $0.optionalText(5), relayOn: $0.optionalInteger(6).map { $0 != 0 }, maxReached: $0.optionalText(7),
                since: $0.optionalInteger(8), cause: $0.optionalText(9), at: $0.optionalInteger(10))
        }
    }
}

extension SQLiteFleetStore: CommitSteps {
    // IMMEDIATE: take the write lock now, not at the first write, so a reader never upgrades.
    func begin() throws { try database.execute("BEGIN IMMEDIATE") }

    func commitTransaction() throws { try database.execute("COMMIT") }

    func rollback() { try? database.execute("ROLLBACK") }

    func lockStates(_ machines: [String]) throws -> [String: SequenceState] {
        var states: [String: SequenceState] = [:]
        // Read to the end (rows), never left on a row: a statement left on a row keeps its read
        // snapshot after COMMIT, and once another connection (the office, `vendstore user add`)
        // has written, every BEGIN IMMEDIATE on this one failed "database is locked" for good.
        for machine in machines {
            let rows = try statements.selectState.rows([.text(machine)]) { SequenceState(contiguous: $0.integer(0), highest: $0.integer(1)) }
            if let state = rows.first { states[machine] = state }
        }
        return states
    }

    func insert(_ events: [IncomingEvent], receivedAt: Int64) throws -> Set<EventKey> {
        var inserted: Set<EventKey> = []
        for event in events {
            try statements.insertEvent.run([
                .text(event.machine), .integer(event.seq), .text(event.id), .text(event.type), .integer(event.at), .text(event.payload),
                .integer(receivedAt),
            ])
            if database.changes == 1 { inserted.insert(event.key) }
        }
        return inserted
    }

    func storedIDs(_ keys: [EventKey]) throws -> [EventKey: String] {
        var ids: [EventKey: String] = [:]
        for key in keys {
            if let id = try statements.selectID.rows([.text(key.machine), .integer(key.seq)], { $0.text(0) }).first { ids[key] = id }
        }
        return ids
    }

    func sequences(above marks: [String: Int64]) throws -> [String: [Int64]] {
        var held: [String: [Int64]] = [:]
        for (machine, mark) in marks {
            held[machine] = try statements.selectAbove.rows([.text(machine), .integer(mark)]) { $0.integer(0) }
        }
        return held
    }

    func saveStates(_ states: [String: SequenceState], at: Int64) throws {
        for (machine, state) in states {
            try statements.upsertState.run([.text(machine), .integer(state.contiguous), .integer(state.highest), .integer(at)])
        }
    }

    func replaceGaps(_ gaps: [String: [ClosedRange<Int64>]], seenAt: Int64) throws {
        for (machine, ranges) in gaps {
            try statements.deleteGaps.run([.text(machine)])
            for range in ranges {
                try statements.insertGap.run([.text(machine), .integer(range.lowerBound), .integer(range.upperBound), .integer(seenAt)])
            }
        }
    }

    func saveLatest(_ updates: [RetainedUpdate], receivedAt: Int64) throws {
        for update in updates {
            try statements.upsertLatest.run([.text(update.machine), .text(update.subject), .text(update.payload), .integer(receivedAt)])
        }
    }

    func savePositions(_ updates: [RetainedUpdate], receivedAt: Int64) throws {
        for update in updates {
            switch update.columns {
            case .stock(let currency, let slots):
                try statements.deleteSlots.run([.text(update.machine)])
                for slot in slots {
                    try statements.insertSlot.run([
                        .text(update.machine), .text(slot.slot), .text(slot.product), .text(slot.price), .text(currency), .integer(slot.available),
                        .integer(slot.stock), .integer(slot.capacity), .integer(slot.earliestExpiry), .integer(receivedAt),
                    ])
                }
            case .cash(let cash):
                try statements.upsertCash.run([
                    .text(update.machine), .text(cash.currency), .text(cash.coinsIn), .text(cash.sales), .text(cash.refunds), .text(cash.billsIn),
                    .text(cash.changePaid), .text(cash.unknownPayouts), .integer(cash.exactChangeOnly?.storedInteger), .integer(receivedAt),
                ])
            case .zone(let zone):
                try statements.upsertZone.run([
                    .text(update.machine), .text(zone.zone), .text(zone.kind), .text(zone.health), .text(zone.temperature),
                    .text(zone.sensorFault), .text(zone.setPoint), .integer(zone.relayOn?.storedInteger), .text(zone.maxReached),
                    .integer(zone.since), .text(zone.cause), .integer(zone.at), .integer(receivedAt),
                ])
                guard let temperature = zone.temperature else { continue }
                let minute = ZoneReadings.minute(receivedAt)
                try statements.upsertReading.run([
                    .text(update.machine), .text(zone.zone), .integer(minute), .integer(zone.at ?? receivedAt), .text(temperature),
                ])
                try statements.pruneReadings.run([.text(update.machine), .text(zone.zone), .integer(minute - ZoneReadings.keptMinutes)])
            case nil:
                break
            }
        }
    }

    func saveSales(_ tally: SalesTally) throws {
        try tally.write(.sqlite) { sql, values in
            let statement = try salesStatements[sql] ?? database.prepare(sql)
            salesStatements[sql] = statement
            try statement.run(values)
        }
    }

    func saveCollections(_ events: [IncomingEvent], receivedAt: Int64) throws {
        for event in events {
            guard let collection = event.collection else { continue }
            try statements.insertCollection.run([
                .text(event.machine), .integer(event.seq), .integer(collection.number), .integer(event.at), .integer(collection.since),
                .text(collection.currency), .text(collection.total), .text(collection.collectedBy), .integer(receivedAt),
            ])
            for count in collection.denominations {
                try statements.insertDenomination.run([
                    .text(event.machine), .integer(event.seq), .text(count.kind.rawValue), .text(count.value), .integer(count.count),
                ])
            }
        }
    }
}
