/// Why the bytes of a state file cannot be trusted, in words for the technician.
struct Damage: Error {
    let reason: String
}

private let newline = UInt8(ascii: "\n")

/// `state.json`: a header line saying which journal record the snapshot covers and how long the
/// JSON body is and its checksum, then the body and a newline. See `StateStore` for the layout.
enum SnapshotFormat {
    static func encode(sequence: UInt64, json: [UInt8]) -> [UInt8] {
        let header = "vendd-state 1 sequence=\(sequence) length=\(json.count) crc32=\(CRC32.hex(CRC32.checksum(json)))\n"
        return Array(header.utf8) + json + [newline]
    }

    /// The last journal sequence the snapshot covers, and its JSON body.
    static func decode(_ bytes: [UInt8]) throws(Damage) -> (sequence: UInt64, json: ArraySlice<UInt8>) {
        guard let headerEnd = bytes.firstIndex(of: newline),
            let header = Header(String(decoding: bytes[..<headerEnd], as: UTF8.self))
        else {
            throw Damage(reason: "the first line is not a header 'vendd-state 1 sequence=… length=… crc32=…'")
        }
        let stored = bytes.count - headerEnd - 2  // less the header's newline and the body's
        guard stored == header.length else {
            throw Damage(reason: "the header announces \(header.length) bytes of JSON but the file holds \(max(stored, 0)) (cut short?)")
        }
        guard bytes.last == newline else { throw Damage(reason: "the JSON is not followed by a newline") }
        let json = bytes[(headerEnd + 1)..<(bytes.count - 1)]
        let crc = CRC32.checksum(json)
        guard crc == header.crc else {
            throw Damage(reason: "the JSON's checksum is \(CRC32.hex(crc)) but the header says \(CRC32.hex(header.crc))")
        }
        return (header.sequence, json)
    }

    private struct Header {
        let sequence: UInt64
        let length: Int
        let crc: UInt32

        init?(_ line: String) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 5, fields[0] == "vendd-state", fields[1] == "1",
                let sequence = Self.value(of: "sequence", in: fields[2]).flatMap({ UInt64($0) }),
                let length = Self.value(of: "length", in: fields[3]).flatMap({ Int($0) }),
                let crc = Self.value(of: "crc32", in: fields[4]).flatMap(CRC32.parse)
            else { return nil }
            (self.sequence, self.length, self.crc) = (sequence, length, crc)
        }

        private static func value(of key: String, in field: Substring) -> Substring? {
            field.hasPrefix(key + "=") ? field.dropFirst(key.count + 1) : nil
        }
    }
}

/// `journal.log`: one record per line, `<sequence> <crc32> <json>`. See `StateStore` for the rules.
enum JournalFormat {
    /// One line: JSONEncoder (without `.prettyPrinted`) escapes newlines inside strings and writes no other.
    static func record(sequence: UInt64, json: [UInt8]) -> [UInt8] {
        Array("\(sequence) \(CRC32.hex(checksum(sequence: sequence, json: json))) ".utf8) + json + [newline]
    }

    /// What a journal holds after the snapshot that covers records up to `covered`.
    struct Contents {
        /// The JSON of records covered+1, covered+2, … in order.
        var records: [ArraySlice<UInt8>] = []
        /// Records at the start that the snapshot already covers: a compaction was interrupted.
        var skipped = 0
        /// Bytes up to the end of the last good record; anything after it is a torn record.
        var validLength = 0
        var tornLength = 0
    }

    static func scan(_ bytes: [UInt8], after covered: UInt64) throws(Damage) -> Contents {
        var contents = Contents()
        while contents.validLength < bytes.count {
            let start = contents.validLength
            let lineEnd = bytes[start...].firstIndex(of: newline)
            guard let end = lineEnd, let record = parse(bytes[start..<end]) else {
                // A power cut during an append damages at most one line: the last.
                if let lineEnd, lineEnd != bytes.count - 1 {
                    throw Damage(reason: "the record at byte \(start) is damaged and more records follow it")
                }
                contents.tornLength = bytes.count - start
                return contents
            }
            let expected = covered + UInt64(contents.records.count) + 1
            if record.sequence <= covered && contents.records.isEmpty {
                contents.skipped += 1
            } else if record.sequence == expected {
                contents.records.append(record.json)
            } else {
                throw Damage(
                    reason:
                        "found record \(record.sequence) at byte \(start) where record \(expected) should be (records are missing or out of order)")
            }
            contents.validLength = end + 1
        }
        return contents
    }

    /// A line without its newline, when its checksum matches.
    private static func parse(_ line: ArraySlice<UInt8>) -> (sequence: UInt64, json: ArraySlice<UInt8>)? {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3,
            let sequence = UInt64(String(decoding: fields[0], as: UTF8.self)),
            let crc = CRC32.parse(String(decoding: fields[1], as: UTF8.self)),
            crc == checksum(sequence: sequence, json: fields[2])
        else { return nil }
        return (sequence, fields[2])
    }

    /// The checksum covers the record without its checksum field: `<sequence> <json>`. The number is
    /// checksummed in the spelling `record` writes, so a line that spells it otherwise ("07") fails.
    private static func checksum(sequence: UInt64, json: some Sequence<UInt8>) -> UInt32 {
        CRC32.checksum(json, continuing: CRC32.checksum("\(sequence) ".utf8))
    }
}
