import FoundationEssentials
import Glibc

/// A crash-safe store for a daemon's state: the last snapshot, plus a write-ahead journal of the
/// entries appended since. After a power cut at any instant, `restore()` gives back exactly what
/// was acknowledged: every `append` that returned, nothing twice. Damaged state is never replaced
/// by an empty machine silently: it is moved aside and the daemon refuses to start until a
/// technician decides.
///
/// Not thread-safe and not `Sendable`: create it in one actor and call it from there only.
///
/// Files in the state directory
/// ----------------------------
///
/// | file | what |
/// |---|---|
/// | `lock` | empty; a running daemon holds an exclusive `flock` on it, so a second one stops |
/// | `state.json` | the last snapshot |
/// | `journal.log` | the entries appended since that snapshot |
/// | `STATE-LOST` | written when the state was found corrupt: says when, why and where it went |
/// | `corrupt-<time>/` | the damaged `state.json` and `journal.log`, moved aside (time in UTC, `20261121T014500Z`) |
/// | `reset-<time>/` | the state `--reset-state` moved aside |
/// | `*.tmp` | a write that a crash interrupted; the next start deletes it |
///
/// `state.json` is a header line, the JSON body, and a newline:
///
///     vendd-state 1 sequence=<S> length=<L> crc32=<C>
///     <exactly L bytes of JSON>
///
/// `S` is the last journal sequence number the snapshot covers (0 when none), `C` the CRC-32 of the
/// body (IEEE, as zlib computes it) in 8 lowercase hex digits. It is written to `state.json.tmp`,
/// fsync'd, renamed over `state.json`, and then the directory is fsync'd, so that a power cut leaves
/// either the old snapshot or the new one.
///
/// `journal.log` holds one record per line:
///
///     <sequence> <crc32> <json>
///
/// The CRC-32 covers `<sequence> <json>` (the line without its checksum field and newline).
/// Sequence numbers start at 1 and go up by exactly 1 over the store's whole life: the record after
/// a snapshot covering `S` is `S+1`. Each record is one `write(2)` on an `O_APPEND` descriptor,
/// then `fsync`, before `append` returns.
///
/// After each snapshot the journal is compacted: an empty `journal.log.tmp` is fsync'd and renamed
/// over `journal.log`, and the directory fsync'd. A crash before that rename leaves records the
/// snapshot already covers; restore skips them.
///
/// Restore rules:
/// - nothing saved (no `state.json`, no journal records, no `STATE-LOST`) → a fresh machine;
/// - `STATE-LOST` present → refuse to start until `--reset-state` (or a backup is put back);
/// - a `state.json` that fails its header, length, checksum or JSON decoding, or a journal with a
///   damaged record before its last, a gap in its sequence numbers, or a record that passes its
///   checksum but does not decode → corrupt: both files go into `corrupt-<time>/`, `STATE-LOST` is
///   written, and restore refuses;
/// - a damaged or unterminated last journal record is what a power cut during an append leaves: it
///   was never acknowledged, so it is dropped, the file truncated after the last good record, and a
///   note given;
/// - leftover `*.tmp` files are deleted, with a note.
public final class StateStore<Snapshot: Codable & Sendable, Entry: Codable & Sendable> {
    public let directory: String
    private let clock: () -> Date
    /// Kept open to fsync the directory after each rename.
    private let directoryFile: OpenFile
    /// nil once closed.
    private var lock: OpenFile?
    /// nil until restored, and after a write failed half-way (see `writing`).
    private var journal: Journal?
    /// The last sequence known durable when a write failed: what `resume` continues after.
    private var sequenceBeforeFailure: UInt64?
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys  // the same state gives the same bytes
        return encoder
    }()
    private let decoder = JSONDecoder()

    private struct Journal {
        let file: OpenFile
        var lastSequence: UInt64
        var entriesSinceSnapshot: Int
    }

    /// Opens the state directory (created 0750 if missing) and locks it against a second daemon.
    /// - Parameter clock: the time that names `corrupt-…` and `reset-…` directories.
    public init(directory: String, clock: @escaping () -> Date = { Date() }) throws(StateStoreError) {
        self.directory = directory
        self.clock = clock
        if try makeDirectory(directory) {
            // The directory's own name must survive a power cut, or everything in it is lost.
            try OpenFile(URL(fileURLWithPath: directory).deletingLastPathComponent().path, flags: O_RDONLY | O_DIRECTORY).sync()
        }
        directoryFile = try OpenFile(directory, flags: O_RDONLY | O_DIRECTORY)
        let lock = try OpenFile(directory + "/" + FileName.lock, flags: O_RDWR | O_CREAT)
        guard try Self.lockWithinGrace(lock) else { throw .locked(directory: directory) }
        self.lock = lock
    }

    /// A held lock is retried for half a second before it counts as another vendd's: a process
    /// being spawned holds a copy of every descriptor of its parent until it executes, and with
    /// it, for that instant, a lock its parent has just released (the tests spawn vendd while
    /// other tests reopen their stores).
    private static func lockWithinGrace(_ lock: OpenFile) throws(StateStoreError) -> Bool {
        for _ in 0..<50 {
            if try lock.tryLock() { return true }
            usleep(10_000)
        }
        return false
    }

    /// Journal records since the last snapshot: the daemon compacts when this grows.
    public var entriesSinceSnapshot: Int { journal?.entriesSinceSnapshot ?? 0 }

    /// Reads the saved state, repairing what a power cut explains. Must come before `append` and
    /// `writeSnapshot`. Throws `.corrupt` or `.stateLost` instead of ever giving an empty machine
    /// for damaged state.
    public func restore() throws(StateStoreError) -> Restored<Snapshot, Entry> {
        guard lock != nil else { throw .notOpen(directory: directory) }
        journal = nil
        if let marker = try read(FileName.marker) { throw stateLost(marker: marker) }
        let removed = try removeTemporaryFiles()
        let saved = try readSnapshot()
        let covered = saved?.sequence ?? 0
        let (entries, file, notes) = try restoreJournal(after: covered)
        journal = Journal(file: file, lastSequence: covered + UInt64(entries.count), entriesSinceSnapshot: entries.count)
        sequenceBeforeFailure = nil
        return Restored(
            snapshot: saved?.snapshot, entries: entries, notes: removed + notes,
            isFresh: saved == nil && entries.isEmpty)
    }

    /// Journals `entry` and returns its sequence number. It is on disk (fsync'd) when this returns.
    /// After a failed write (here or in `writeSnapshot`) the store refuses writes until `resume`
    /// succeeds or `restore()` runs again, which treats a half-written record like one a power cut
    /// interrupted.
    @discardableResult
    public func append(_ entry: Entry) throws(StateStoreError) -> UInt64 {
        let json = try encode(entry, what: "journal entry")
        return try writing { (journal: inout Journal) throws(StateStoreError) -> UInt64 in
            let sequence = journal.lastSequence + 1
            try journal.file.write(JournalFormat.record(sequence: sequence, json: json))
            try journal.file.sync()
            journal.lastSequence = sequence
            journal.entriesSinceSnapshot += 1
            return sequence
        }
    }

    /// Saves `snapshot` as covering every entry appended so far, then empties the journal.
    public func writeSnapshot(_ snapshot: Snapshot) throws(StateStoreError) {
        let json = try encode(snapshot, what: "snapshot")
        try writing { (journal: inout Journal) throws(StateStoreError) in
            try replaceFile(FileName.snapshot, with: SnapshotFormat.encode(sequence: journal.lastSequence, json: json))
            // Appends continue on the emptied file, which is journal.log from the rename on.
            let emptied = try replaceFile(FileName.journal, with: [], flags: O_APPEND)
            journal = Journal(file: emptied, lastSequence: journal.lastSequence, entriesSinceSnapshot: 0)
        }
    }

    /// Whether a write failed and the store waits for `resume`.
    public var isWaitingToResume: Bool { journal == nil && sequenceBeforeFailure != nil }

    /// After a failed write (a full or read-only file system, an I/O error): saves `snapshot`, the
    /// whole machine as it is now, over the last one and starts an empty journal, so writing goes
    /// on where it stopped. The snapshot's sequence is one past the last durable record: a record
    /// half-written by the failure is covered by it and never replayed. Throws while the file
    /// system still refuses; call again later.
    public func resume(with snapshot: Snapshot) throws(StateStoreError) {
        guard lock != nil, journal == nil, let last = sequenceBeforeFailure else { throw .notOpen(directory: directory) }
        let json = try encode(snapshot, what: "snapshot")
        let sequence = last + 1
        try replaceFile(FileName.snapshot, with: SnapshotFormat.encode(sequence: sequence, json: json))
        let emptied = try replaceFile(FileName.journal, with: [], flags: O_APPEND)
        journal = Journal(file: emptied, lastSequence: sequence, entriesSinceSnapshot: 0)
        sequenceBeforeFailure = nil
    }

    /// For `--reset-state`: moves `state.json` and `journal.log` into `reset-<time>/` and deletes
    /// `STATE-LOST`, so that the next `restore()` is fresh. Returns where the files went, or nil
    /// when there were none.
    public func reset() throws(StateStoreError) -> String? {
        guard lock != nil else { throw .notOpen(directory: directory) }
        journal = nil
        let present = try existing([FileName.snapshot, FileName.journal])
        let aside = try present.isEmpty ? nil : makeAsideDirectory("reset", at: clock())
        if let aside { try move(present, into: aside) }
        // After the move: a power cut in between leaves STATE-LOST, and the reset is simply repeated.
        if try remove(FileName.marker) { try directoryFile.sync() }
        return aside
    }

    /// Replaces another file of the state directory (the fleet outbox) as crash-safely as the
    /// snapshot: after a power cut it holds the old bytes or the new.
    public func replaceCompanion(_ name: String, with bytes: [UInt8]) throws(StateStoreError) {
        guard lock != nil else { throw .notOpen(directory: directory) }
        try replaceFile(name, with: bytes)
    }

    /// Another file of the state directory; nil when there is none.
    public func readCompanion(_ name: String) throws(StateStoreError) -> [UInt8]? {
        guard lock != nil else { throw .notOpen(directory: directory) }
        return try read(name)
    }

    /// Releases the lock; every later call throws `.notOpen`. Dropping the store does the same.
    public func close() {
        journal = nil
        lock = nil
    }

    // MARK: - Restoring

    private func readSnapshot() throws(StateStoreError) -> (sequence: UInt64, snapshot: Snapshot)? {
        guard let bytes = try read(FileName.snapshot) else { return nil }
        do throws(Damage) {
            let (sequence, json) = try SnapshotFormat.decode(bytes)
            return (sequence, try decode(Snapshot.self, from: json, failure: "the JSON does not decode as a snapshot"))
        } catch {
            try quarantine(FileName.snapshot, error)
        }
    }

    /// The entries after `covered`, and the journal opened for appending, cut after its last good
    /// record if a power cut tore the one after it.
    private func restoreJournal(after covered: UInt64) throws(StateStoreError) -> (entries: [Entry], file: OpenFile, notes: [String]) {
        let bytes = try read(FileName.journal)
        let contents: JournalFormat.Contents
        let entries: [Entry]
        do throws(Damage) {
            contents = try JournalFormat.scan(bytes ?? [], after: covered)
            entries = try contents.records.enumerated().map { (index, json) throws(Damage) in
                let failure = "record \(covered + UInt64(index) + 1) passes its checksum but does not decode as an entry"
                return try decode(Entry.self, from: json, failure: failure)
            }
        } catch {
            try quarantine(FileName.journal, error)
        }
        let file = try OpenFile(path(FileName.journal), flags: O_WRONLY | O_APPEND | O_CREAT)
        if bytes == nil { try directoryFile.sync() }  // a new file's name must survive a power cut too
        var notes: [String] = []
        if contents.tornLength > 0 {
            try file.truncate(to: contents.validLength)
            try file.sync()
            notes.append("\(file.path): dropped an incomplete last record (\(contents.tornLength) bytes) written when power was lost")
        }
        if contents.skipped > 0 {
            let records = contents.skipped == 1 ? "1 record" : "\(contents.skipped) records"
            notes.append("\(file.path): skipped \(records) the snapshot already holds (a compaction was interrupted)")
        }
        return (entries, file, notes)
    }

    private func removeTemporaryFiles() throws(StateStoreError) -> [String] {
        var notes: [String] = []
        for name in [FileName.snapshot, FileName.journal, FileName.marker].map(FileName.temporary) {
            if try remove(name) { notes.append("\(path(name)): removed a temporary file left by an interrupted write") }
        }
        return notes
    }

    /// Moves the damaged state aside and leaves the STATE-LOST marker, so that no later start
    /// begins with an empty machine without a technician deciding.
    private func quarantine(_ name: String, _ damage: Damage) throws(StateStoreError) -> Never {
        let now = clock()
        let aside = try makeAsideDirectory("corrupt", at: now)
        let error = StateStoreError.corrupt(file: path(name), reason: damage.reason, movedTo: aside)
        // The marker first: a power cut before the files are moved must still stop the next start.
        try replaceFile(FileName.marker, with: Array(LostStateMarker.text(foundOn: now, movedTo: aside, error: error).utf8))
        try move(existing([FileName.snapshot, FileName.journal]), into: aside)
        throw error
    }

    private func stateLost(marker: [UInt8]) -> StateStoreError {
        let fields = LostStateMarker(String(decoding: marker, as: UTF8.self))
        return .stateLost(marker: path(FileName.marker), foundOn: fields.foundOn, movedTo: fields.movedTo)
    }

    // MARK: - Writing

    /// Runs a write with the journal taken out of the store: if it fails half-way, the store
    /// refuses further writes until `restore()` has looked at the files again, as after a power cut.
    private func writing<Value>(_ write: (inout Journal) throws(StateStoreError) -> Value) throws(StateStoreError) -> Value {
        guard var taken = journal else { throw .notOpen(directory: directory) }
        journal = nil
        sequenceBeforeFailure = taken.lastSequence
        let value = try write(&taken)
        journal = taken
        sequenceBeforeFailure = nil
        return value
    }

    /// Replaces the file `name` so that after a crash it holds the old bytes or the new, never a
    /// mix: temporary file, write, fsync, rename, fsync of the directory. Returns the new file, open
    /// for writing with `flags` added.
    @discardableResult
    private func replaceFile(_ name: String, with bytes: [UInt8], flags: Int32 = 0) throws(StateStoreError) -> OpenFile {
        let temporary = path(FileName.temporary(name))
        let file = try OpenFile(temporary, flags: O_CREAT | O_TRUNC | O_WRONLY | flags)
        try file.write(bytes)
        try file.sync()
        try systemCall("rename", temporary) { rename(temporary, path(name)) }
        file.path = path(name)
        try directoryFile.sync()
        return file
    }

    private func encode(_ value: some Encodable, what: String) throws(StateStoreError) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw .encoding(what: what, reason: "\(error)")
        }
    }

    private func decode<Value: Decodable>(_ type: Value.Type, from json: ArraySlice<UInt8>, failure: String) throws(Damage) -> Value {
        do {
            return try decoder.decode(type, from: Data(json))
        } catch {
            throw Damage(reason: "\(failure): \(summary(of: error))")
        }
    }

    // MARK: - Files of the directory

    private func path(_ name: String) -> String { directory + "/" + name }

    private func read(_ name: String) throws(StateStoreError) -> [UInt8]? {
        try ifPresent { () throws(StateStoreError) in try OpenFile(path(name), flags: O_RDONLY) }?.readToEnd()
    }

    /// Those of the files `names` that exist.
    private func existing(_ names: [String]) throws(StateStoreError) -> [String] {
        var present: [String] = []
        for name in names {
            let path = path(name)
            if try ifPresent({ () throws(StateStoreError) in try systemCall("access", path) { access(path, F_OK) } }) != nil {
                present.append(name)
            }
        }
        return present
    }

    /// Deletes the file `name`; false when there was none.
    private func remove(_ name: String) throws(StateStoreError) -> Bool {
        let path = path(name)
        return try ifPresent { () throws(StateStoreError) in try systemCall("unlink", path) { unlink(path) } } != nil
    }

    /// `<prefix>-<UTC time>` in the state directory, with `-2`, `-3`… when that name is taken.
    private func makeAsideDirectory(_ prefix: String, at date: Date) throws(StateStoreError) -> String {
        let stamp = date.formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted))
        let base = path("\(prefix)-\(stamp)")
        var candidate = base
        var attempt = 1
        while try !makeDirectory(candidate) {
            attempt += 1
            candidate = "\(base)-\(attempt)"
        }
        return candidate
    }

    /// Renames the files `names` into the directory `aside`, durably on both sides.
    private func move(_ names: [String], into aside: String) throws(StateStoreError) {
        for name in names {
            let source = path(name)
            let destination = aside + "/" + name
            try systemCall("rename", source) { rename(source, destination) }
        }
        try OpenFile(aside, flags: O_RDONLY | O_DIRECTORY).sync()
        try directoryFile.sync()
    }
}

/// What `restore()` found.
public struct Restored<Snapshot, Entry> {
    /// The last snapshot; nil when none was ever written.
    public let snapshot: Snapshot?
    /// The entries appended after that snapshot, oldest first: replay them onto it.
    public let entries: [Entry]
    /// What restore repaired, for the log: a torn last record dropped, temporary files removed.
    public let notes: [String]
    /// Nothing was saved yet: no snapshot and no journal records. Start from the configuration.
    public let isFresh: Bool
}

extension Restored: Sendable where Snapshot: Sendable, Entry: Sendable {}

private enum FileName {
    static let lock = "lock"
    static let snapshot = "state.json"
    static let journal = "journal.log"
    static let marker = "STATE-LOST"

    static func temporary(_ name: String) -> String { name + ".tmp" }
}

/// The STATE-LOST file: two lines a later start reads back, then the whole explanation.
private struct LostStateMarker {
    let foundOn: String
    let movedTo: String

    static func text(foundOn date: Date, movedTo: String, error: StateStoreError) -> String {
        "found: \(date.formatted(.iso8601))\nmoved to: \(movedTo)\n\n\(error)\n"
    }

    init(_ text: String) {
        let lines = text.split(separator: "\n")
        func field(_ key: String) -> String? {
            lines.first { $0.hasPrefix(key + ": ") }.map { String($0.dropFirst(key.count + 2)) }
        }
        foundOn = field("found") ?? "an unknown date"
        movedTo = field("moved to") ?? "an unknown place"
    }
}

/// Creates a directory (0750); false when it already exists.
private func makeDirectory(_ path: String) throws(StateStoreError) -> Bool {
    do throws(StateStoreError) {
        try systemCall("mkdir", path) { mkdir(path, 0o750) }
        return true
    } catch .system(_, _, EEXIST) {
        return false
    }
}

/// A decoding error in one line: where in the JSON, and what was wrong.
private func summary(of error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    switch error {
    case .dataCorrupted(let context), .keyNotFound(_, let context),
        .typeMismatch(_, let context), .valueNotFound(_, let context):
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
    @unknown default:
        return "\(error)"
    }
}
