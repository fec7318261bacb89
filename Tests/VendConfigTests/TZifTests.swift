import Foundation
import Testing
import VendingCore

@testable import VendConfig

/// The time zone file reader: the system's zones, and the files it must refuse rather than read
/// wrong (RFC 8536 layout).
@Suite struct TZifTests {
    /// A version-2 file: the 32-bit block, then the 64-bit one with `transitions` (seconds, offset
    /// index into `offsets`), then the footer.
    static func file(offsets: [Int32], transitions: [(Int64, UInt8)], footer: String) -> [UInt8] {
        func be32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        func be64(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        func block(_ timeSize: Int) -> [UInt8] {
            var bytes = Array("TZif2".utf8) + [UInt8](repeating: 0, count: 15)
            for count in [0, 0, 0, Int32(transitions.count), Int32(offsets.count), 4] { bytes += be32(count) }
            for (at, _) in transitions { bytes += timeSize == 8 ? be64(at) : be32(Int32(at)) }
            bytes += transitions.map(\.1)
            for offset in offsets { bytes += be32(offset) + [0, 0] }
            return bytes + Array("UTC\0".utf8)
        }
        return block(4) + block(8) + Array("\n\(footer)\n".utf8)
    }

    @Test func aFatSystemZoneListsItsChangesToTwentyThirtySeven() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Berlin")))
        let rules = try TZif.rules(name: "Europe/Berlin", bytes: bytes)
        #expect(rules.transitions.count > 100)
        #expect((rules.transitions.last?.at ?? 0) >= 2_114_380_800)
        #expect(Set(rules.transitions.suffix(4).map(\.offset)) == [3_600, 7_200])
    }

    @Test func aZoneWithoutSummerTimeNeedsNoListedChanges() throws {
        let rules = try TZif.rules(name: "X", bytes: Self.file(offsets: [32_400], transitions: [], footer: "KST-9"))
        #expect(rules.offset(at: Instant(millisecondsSinceEpoch: 1_790_000_000_000)) == 32_400)
    }

    @Test func aSlimFileIsRefused() {
        let slim = Self.file(offsets: [3_600, 7_200], transitions: [(1_174_784_400, 1)], footer: "CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(throws: TZif.Problem.slim(lastYear: 2007)) { try TZif.rules(name: "X", bytes: slim) }
    }

    @Test func whatIsNotTZifIsSaidSo() {
        #expect(throws: TZif.Problem.notTZif) { try TZif.rules(name: "X", bytes: Array("# Allowance for leap seconds".utf8)) }
        let whole = Self.file(offsets: [3_600, 7_200], transitions: [(0, 1)], footer: "CET-1")
        #expect(throws: TZif.Problem.truncated) { try TZif.rules(name: "X", bytes: Array(whole.prefix(60))) }
    }
}
