import VendingCore

/// Reads a time zone file of the system's tz database (TZif, RFC 8536) into the offsets the core
/// judges time bands by. Only the transitions are used: Debian's tzdata lists them up to 2037
/// ("fat" files); a file that leaves its daylight saving time to the footer's rule ("slim") is
/// refused rather than read wrong.
enum TZif {
    enum Problem: Error, Equatable, CustomStringConvertible {
        case notTZif
        case truncated
        case slim(lastYear: Int)

        var description: String {
            switch self {
            case .notTZif: "is not a time zone file (TZif)"
            case .truncated: "is cut short"
            case .slim(let year):
                "lists its daylight saving changes only up to \(year) (a 'slim' file); install tzdata built with all transitions (Debian's is)"
            }
        }
    }

    /// 2037-01-01T00:00Z: a fat file lists transitions up to here.
    private static let fatHorizon: Int64 = 2_114_380_800

    static func rules(name: String, bytes: [UInt8]) throws(Problem) -> TimeZoneRules {
        var reader = Reader(bytes: bytes)
        let version = try reader.header()
        let first = try reader.counts()
        guard version >= 2 else {
            let (initial, transitions) = try reader.data(first, timeSize: 4)
            return TimeZoneRules(name: name, initialOffset: initial, transitions: transitions)
        }
        // Version 2 and later repeat the data with 64-bit times after the 32-bit block.
        reader.skip(first.length(timeSize: 4))
        _ = try reader.header()
        let counts = try reader.counts()
        let (initial, transitions) = try reader.data(counts, timeSize: 8)
        let footer = String(decoding: reader.rest, as: UTF8.self)
        if footer.contains(","), (transitions.last?.at ?? 0) < fatHorizon {
            let year = 1970 + Int((transitions.last?.at ?? 0) / 31_556_952)
            throw .slim(lastYear: year)
        }
        return TimeZoneRules(name: name, initialOffset: initial, transitions: transitions)
    }

    struct Counts {
        let utIndicators, standardIndicators, leaps, times, types, characters: Int

        func length(timeSize: Int) -> Int {
            times * timeSize + times + types * 6 + characters + leaps * (timeSize + 4) + standardIndicators + utIndicators
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var rest: ArraySlice<UInt8> { bytes[min(index, bytes.count)...] }

        mutating func skip(_ count: Int) { index += count }

        mutating func take(_ count: Int) throws(Problem) -> ArraySlice<UInt8> {
            guard index + count <= bytes.count else { throw .truncated }
            defer { index += count }
            return bytes[index..<(index + count)]
        }

        mutating func integer(_ size: Int) throws(Problem) -> Int64 {
            let part = try take(size)
            let unsigned = part.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            // Sign-extend a 4-byte value.
            return size == 4 ? Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: unsigned))) : Int64(bitPattern: unsigned)
        }

        /// "TZif", the version, 15 reserved bytes.
        mutating func header() throws(Problem) -> Int {
            guard Array(try take(4)) == Array("TZif".utf8) else { throw .notTZif }
            let version = try take(1).first!
            skip(15)
            switch version {
            case 0: return 1
            case UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"): return Int(version - UInt8(ascii: "0"))
            default: throw .notTZif
            }
        }

        mutating func counts() throws(Problem) -> Counts {
            var values: [Int] = []
            for _ in 0..<6 { values.append(Int(try integer(4))) }
            guard values.allSatisfy({ $0 >= 0 }), values[4] >= 1 else { throw .notTZif }
            return Counts(
                utIndicators: values[0], standardIndicators: values[1], leaps: values[2], times: values[3], types: values[4],
                characters: values[5])
        }

        /// The offset before the first transition (time type 0, RFC 8536 §3.2) and every transition.
        mutating func data(_ counts: Counts, timeSize: Int) throws(Problem) -> (Int, [TimeZoneRules.Transition]) {
            var times: [Int64] = []
            for _ in 0..<counts.times { times.append(try integer(timeSize)) }
            let typeIndices = Array(try take(counts.times))
            var offsets: [Int] = []
            for _ in 0..<counts.types {
                offsets.append(Int(try integer(4)))
                skip(2)
            }
            skip(counts.characters + counts.leaps * (timeSize + 4) + counts.standardIndicators + counts.utIndicators)
            guard index <= bytes.count, typeIndices.allSatisfy({ Int($0) < offsets.count }) else { throw .truncated }
            let transitions = zip(times, typeIndices).map { TimeZoneRules.Transition(at: $0, offset: offsets[Int($1)]) }
            return (offsets[0], transitions)
        }
    }
}
