import Foundation
import Testing

@testable import VendStore

struct Tally: Codable, Sendable, Equatable {
    var total: Int
    var note = ""
}

struct Coin: Codable, Sendable, Equatable {
    var value: Int
    var source = "acceptor"
}

typealias Store = StateStore<Tally, Coin>

/// 2026-11-21T01:45:00Z: the tests' clock, which names the corrupt-… and reset-… directories.
let testTime = Date(timeIntervalSince1970: 1_795_225_500)
let stamp = "20261121T014500Z"

func openStore(_ directory: String) throws -> Store {
    try Store(directory: directory, clock: { testTime })
}

/// Restores in a new store, as a restarted daemon does.
func restart(_ directory: String) throws -> Restored<Tally, Coin> {
    let store = try openStore(directory)
    defer { store.close() }
    return try store.restore()
}

/// Runs `body` with the path of a state directory (not created yet) in a temporary directory that
/// is removed afterwards.
func withStateDirectory(_ body: (String) throws -> Void) throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("vendstore-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: root) }
    try body(root + "/state")
}

/// A store with `coins` appended, closed again.
func save(_ coins: [Coin], in directory: String, snapshotAfter: Int? = nil, tally: Tally = Tally(total: 0)) throws {
    let store = try openStore(directory)
    defer { store.close() }
    _ = try store.restore()
    for (index, coin) in coins.enumerated() {
        try store.append(coin)
        if index + 1 == snapshotAfter { try store.writeSnapshot(tally) }
    }
}

func coins(_ count: Int) -> [Coin] {
    (1...count).map { Coin(value: 100 * $0) }
}

func contents(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func exists(_ path: String) -> Bool {
    FileManager.default.fileExists(atPath: path)
}

/// Byte offsets at which each line starts.
func lineStarts(_ bytes: [UInt8]) -> [Int] {
    [0] + bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") && $0 + 1 < bytes.count }.map { $0 + 1 }
}

@Suite struct StateStoreTests {
    @Test func freshDirectoryThenEntriesSurviveARestart() throws {
        try withStateDirectory { directory in
            let store = try openStore(directory)
            let fresh = try store.restore()
            #expect(fresh.isFresh && fresh.snapshot == nil && fresh.entries.isEmpty && fresh.notes.isEmpty)
            #expect(try coins(3).map { coin throws(StateStoreError) in try store.append(coin) } == [1, 2, 3])
            #expect(store.entriesSinceSnapshot == 3)
            store.close()

            let restored = try restart(directory)
            #expect(!restored.isFresh)
            #expect(restored.snapshot == nil)
            #expect(restored.entries == coins(3))
            #expect(restored.notes.isEmpty)
        }
    }

    @Test func snapshotThenLaterEntries() throws {
        try withStateDirectory { directory in
            let store = try openStore(directory)
            _ = try store.restore()
            try store.append(Coin(value: 100))
            try store.append(Coin(value: 200))
            try store.writeSnapshot(Tally(total: 300))
            #expect(store.entriesSinceSnapshot == 0)
            #expect(try contents(directory + "/journal.log").isEmpty)
            #expect(try store.append(Coin(value: 50)) == 3)
            store.close()

            let reopened = try openStore(directory)
            let restored = try reopened.restore()
            #expect(restored.snapshot == Tally(total: 300))
            #expect(restored.entries == [Coin(value: 50)])
            #expect(reopened.entriesSinceSnapshot == 1)
            #expect(try reopened.append(Coin(value: 10)) == 4)
        }
    }

    @Test func tornLastRecordIsDroppedWhereverThePowerCutFell() throws {
        try withStateDirectory { directory in
            try save(coins(4), in: directory)
            let journal = directory + "/journal.log"
            let full = try contents(journal)
            let lastStart = try #require(lineStarts(full).last)
            for cut in (lastStart + 1)..<full.count {
                try write(Array(full[..<cut]), to: journal)
                let store = try openStore(directory)
                let restored = try store.restore()
                #expect(restored.entries == Array(coins(3)), "cut at \(cut)")
                #expect(restored.notes == ["\(journal): dropped an incomplete last record (\(cut - lastStart) bytes) written when power was lost"])
                #expect(try contents(journal) == Array(full[..<lastStart]))
                #expect(try store.append(Coin(value: 1, source: "after")) == 4)
                store.close()

                let again = try restart(directory)
                #expect(again.entries == coins(3) + [Coin(value: 1, source: "after")], "cut at \(cut)")
                #expect(again.notes.isEmpty)
            }
        }
    }

    @Test func damagedMiddleRecordIsCorruptionUntilReset() throws {
        try withStateDirectory { directory in
            try save(coins(5), in: directory, snapshotAfter: 2, tally: Tally(total: 300))
            let journal = directory + "/journal.log"
            var damaged = try contents(journal)
            let middle = lineStarts(damaged)[1]
            damaged[middle + 13] ^= 0x01  // `{"source"` → `{"rource"`
            try write(damaged, to: journal)
            let snapshot = try contents(directory + "/state.json")

            let aside = directory + "/corrupt-" + stamp
            let corrupt = StateStoreError.corrupt(
                file: journal, reason: "the record at byte \(middle) is damaged and more records follow it", movedTo: aside)
            #expect(throws: corrupt) { try restart(directory) }
            #expect(try contents(aside + "/journal.log") == damaged)
            #expect(try contents(aside + "/state.json") == snapshot)
            #expect(!exists(journal) && !exists(directory + "/state.json"))
            let marker = String(decoding: try contents(directory + "/STATE-LOST"), as: UTF8.self)
            #expect(marker == "found: 2026-11-21T01:45:00Z\nmoved to: \(aside)\n\n\(corrupt)\n")

            let lost = StateStoreError.stateLost(marker: directory + "/STATE-LOST", foundOn: "2026-11-21T01:45:00Z", movedTo: aside)
            #expect(throws: lost) { try restart(directory) }

            let store = try openStore(directory)
            #expect(try store.reset() == nil)  // the files are already aside
            let restored = try store.restore()
            #expect(restored.isFresh && restored.entries.isEmpty && restored.snapshot == nil)
            #expect(!exists(directory + "/STATE-LOST"))
            #expect(try contents(aside + "/journal.log") == damaged)
        }
    }

    @Test func snapshotCutInHalfIsCorrupt() throws {
        try withStateDirectory { directory in
            try save(coins(1), in: directory, snapshotAfter: 1, tally: Tally(total: 100, note: String(repeating: "x", count: 200)))
            let file = try contents(directory + "/state.json")
            let half = Array(file[..<(file.count / 2)])
            let headerLength = try #require(file.firstIndex(of: UInt8(ascii: "\n")))
            let announced = file.count - headerLength - 2
            try expectCorruptSnapshot(
                half, in: directory,
                reason: "the header announces \(announced) bytes of JSON but the file holds \(half.count - headerLength - 2) (cut short?)")
        }
    }

    @Test func snapshotWithGarbageJSONAndAValidChecksumIsCorrupt() throws {
        try withStateDirectory { directory in
            try expectCorruptSnapshot(
                snapshotFile(body: "not json"), in: directory,
                reason: "the JSON does not decode as a snapshot: The given data was not valid JSON.")
        }
        try withStateDirectory { directory in
            try expectCorruptSnapshot(
                snapshotFile(body: #"{"total":"two"}"#), in: directory,
                reason: "the JSON does not decode as a snapshot: total: Expected to decode Int but found a string instead.")
        }
    }

    @Test func snapshotWithAFlippedBodyByteOrABadHeaderIsCorrupt() throws {
        try withStateDirectory { directory in
            var file = snapshotFile(body: #"{"total":7}"#)
            file[file.count - 3] = UInt8(ascii: "8")
            try expectCorruptSnapshot(
                file, in: directory,
                reason:
                    "the JSON's checksum is \(CRC32.hex(CRC32.checksum(#"{"total":8}"#.utf8))) but the header says \(CRC32.hex(CRC32.checksum(#"{"total":7}"#.utf8)))"
            )
        }
        try withStateDirectory { directory in
            try expectCorruptSnapshot(
                Array("vendd-state 2 sequence=0 length=2 crc32=00000000\n{}\n".utf8), in: directory,
                reason: "the first line is not a header 'vendd-state 1 sequence=… length=… crc32=…'")
        }
    }

    @Test func interruptedCompactionLeavesOldRecordsThatAreSkipped() throws {
        try withStateDirectory { directory in
            let journal = directory + "/journal.log"
            let store = try openStore(directory)
            _ = try store.restore()
            for coin in coins(3) { try store.append(coin) }
            let beforeCompaction = try contents(journal)
            try store.writeSnapshot(Tally(total: 600))
            store.close()
            try write(beforeCompaction, to: journal)  // as if power was lost before the journal's rename

            let reopened = try openStore(directory)
            let restored = try reopened.restore()
            #expect(restored.snapshot == Tally(total: 600))
            #expect(restored.entries.isEmpty)
            #expect(restored.notes == ["\(journal): skipped 3 records the snapshot already holds (a compaction was interrupted)"])
            #expect(reopened.entriesSinceSnapshot == 0)
            #expect(try reopened.append(Coin(value: 5)) == 4)
            reopened.close()

            let again = try restart(directory)
            #expect(again.snapshot == Tally(total: 600))
            #expect(again.entries == [Coin(value: 5)])
        }
    }

    @Test func missingRecordIsCorrupt() throws {
        try withStateDirectory { directory in
            try save(coins(4), in: directory)
            let journal = directory + "/journal.log"
            let full = try contents(journal)
            let starts = lineStarts(full)
            try write(Array(full[..<starts[1]] + full[starts[2]...]), to: journal)
            #expect(
                throws: StateStoreError.corrupt(
                    file: journal,
                    reason: "found record 3 at byte \(starts[1]) where record 2 should be (records are missing or out of order)",
                    movedTo: directory + "/corrupt-" + stamp)
            ) { try restart(directory) }
        }
    }

    @Test func secondStoreOnTheSameDirectoryIsLocked() throws {
        try withStateDirectory { directory in
            let first = try openStore(directory)
            _ = try first.restore()
            #expect(throws: StateStoreError.locked(directory: directory)) { try openStore(directory) }
            first.close()
            #expect(throws: StateStoreError.notOpen(directory: directory)) { try first.append(Coin(value: 1)) }
            #expect(try restart(directory).isFresh)
        }
    }

    @Test func staleTemporaryFilesAreRemoved() throws {
        try withStateDirectory { directory in
            try save([], in: directory)
            try write(Array("vendd-state 1 seq".utf8), to: directory + "/state.json.tmp")
            try write([], to: directory + "/journal.log.tmp")
            let restored = try restart(directory)
            #expect(restored.isFresh)
            #expect(
                restored.notes == [
                    "\(directory)/state.json.tmp: removed a temporary file left by an interrupted write",
                    "\(directory)/journal.log.tmp: removed a temporary file left by an interrupted write",
                ])
            #expect(!exists(directory + "/state.json.tmp") && !exists(directory + "/journal.log.tmp"))
        }
    }

    @Test func resetMovesTheStateAside() throws {
        try withStateDirectory { directory in
            try save(coins(2), in: directory, snapshotAfter: 1, tally: Tally(total: 100))
            let journal = try contents(directory + "/journal.log")
            let store = try openStore(directory)
            #expect(try store.reset() == directory + "/reset-" + stamp)
            #expect(try contents(directory + "/reset-\(stamp)/journal.log") == journal)
            #expect(exists(directory + "/reset-\(stamp)/state.json"))
            #expect(try store.restore().isFresh)
            try store.append(Coin(value: 1))
            #expect(try store.reset() == directory + "/reset-\(stamp)-2")  // the same second again
            #expect(try store.restore().isFresh)
        }
    }

    @Test func errorsNameTheFileAndSayWhatToDo() throws {
        try withStateDirectory { directory in
            let parent = URL(fileURLWithPath: directory).deletingLastPathComponent().path
            try write([], to: parent + "/plain-file")
            #expect(throws: StateStoreError.system(operation: "mkdir", path: parent + "/plain-file/state", errno: ENOTDIR)) {
                try openStore(parent + "/plain-file/state")
            }
        }
        #expect(
            StateStoreError.system(operation: "mkdir", path: "/var/lib/vendd", errno: ENOTDIR).description
                == "/var/lib/vendd: mkdir failed: Not a directory; check that the file system is mounted read-write and not full, and that the vendd user may write there"
        )
        #expect(
            StateStoreError.locked(directory: "/var/lib/vendd").description
                == "/var/lib/vendd: another vendd is using this state directory (it holds /var/lib/vendd/lock); stop it first (systemctl stop vendd): two daemons would count the same coins twice"
        )
        #expect(
            StateStoreError.stateLost(
                marker: "/var/lib/vendd/STATE-LOST", foundOn: "2026-11-21T01:45:00Z",
                movedTo: "/var/lib/vendd/corrupt-20261121T014500Z"
            ).description
                == "/var/lib/vendd/STATE-LOST: the saved state was found corrupt on 2026-11-21T01:45:00Z and moved to "
                + "/var/lib/vendd/corrupt-20261121T014500Z, and vendd will not start an empty machine on its own. "
                + "Inspect the files in /var/lib/vendd/corrupt-20261121T014500Z, then either start vendd once with "
                + "--reset-state, which starts an empty machine (credit, stock and sales at zero: count the cash box "
                + "and restock the machine), or put a good backup of state.json and journal.log back into the state "
                + "directory and delete its STATE-LOST file.")
    }

    @Test func fileFormatsAreExact() throws {
        #expect(CRC32.checksum("123456789".utf8) == 0xCBF4_3926)  // the standard check value
        #expect(CRC32.hex(0x0000_00AB) == "000000ab")
        try withStateDirectory { directory in
            let store = try openStore(directory)
            _ = try store.restore()
            try store.append(Coin(value: 100, source: "coin"))
            // crc32 values from Python's zlib.crc32.
            #expect(
                String(decoding: try contents(directory + "/journal.log"), as: UTF8.self)
                    == #"1 54526d44 {"source":"coin","value":100}"# + "\n")
            try store.writeSnapshot(Tally(total: 2, note: "ok"))
            #expect(
                String(decoding: try contents(directory + "/state.json"), as: UTF8.self)
                    == "vendd-state 1 sequence=1 length=23 crc32=c96ebc3d\n" + #"{"note":"ok","total":2}"# + "\n")
        }
    }
}

/// A `state.json` whose header matches `body`.
func snapshotFile(body: String) -> [UInt8] {
    Array("vendd-state 1 sequence=0 length=\(body.utf8.count) crc32=\(CRC32.hex(CRC32.checksum(body.utf8)))\n\(body)\n".utf8)
}

/// Puts `file` as the state.json of a new state directory and checks that restore reports it as
/// corrupt for `reason`, moves it aside unchanged and writes STATE-LOST.
func expectCorruptSnapshot(_ file: [UInt8], in directory: String, reason: String) throws {
    try save([], in: directory)
    try write(file, to: directory + "/state.json")
    let aside = directory + "/corrupt-" + stamp
    #expect(throws: StateStoreError.corrupt(file: directory + "/state.json", reason: reason, movedTo: aside)) {
        try restart(directory)
    }
    #expect(try contents(aside + "/state.json") == file)
    #expect(exists(aside + "/journal.log"))
    #expect(exists(directory + "/STATE-LOST"))
}
