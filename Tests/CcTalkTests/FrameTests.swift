import CcTalk
import Testing

/// The codec against the byte traces of Part 3 Appendix 11 ("Coin Acceptor Messaging Example")
/// and the examples of Part 1 §7.12 and Part 3 Appendix 9.
@Suite struct FrameTests {
    static func bytes(_ decimal: String) -> [UInt8] { decimal.split(separator: " ").map { UInt8($0)! } }

    @Test(arguments: [
        // (header, data, transmitted bytes) from Appendix 11.
        (UInt8(254), [UInt8](), "002 000 001 254 255"),
        (245, [], "002 000 001 245 008"),
        (244, [], "002 000 001 244 009"),
        (192, [], "002 000 001 192 061"),
        (246, [], "002 000 001 246 007"),
        (242, [], "002 000 001 242 011"),
        (241, [], "002 000 001 241 012"),
        (4, [], "002 000 001 004 249"),
        (184, [1], "002 001 001 184 001 067"),
        (184, [5], "002 001 001 184 005 063"),
        (184, [8], "002 001 001 184 008 060"),
        (231, [255, 255], "002 002 001 231 255 255 022"),
        (229, [], "002 000 001 229 024"),
        // Part 1 §7.12 and research §3.2.
        (228, [1], "002 001 001 228 001 023"),
        (232, [], "002 000 001 232 021"),
        (1, [], "002 000 001 001 252"),
    ])
    func requestsEncodeAsTheSpecShows(header: UInt8, data: [UInt8], wire: String) {
        #expect(Frame(destination: 2, source: 1, header: header, data: data).encoded(.simple8) == Self.bytes(wire))
    }

    @Test(arguments: [
        ("001 000 002 000 253", [UInt8]()),
        ("001 013 002 000 067 111 105 110 032 065 099 099 101 112 116 111 114 022", Array("Coin Acceptor".utf8)),
        ("001 004 002 000 083 082 053 105 182", Array("SR5i".utf8)),
        ("001 008 002 000 083 084 068 048 049 032 032 032 073", Array("STD01   ".utf8)),
        ("001 014 002 000 077 111 110 101 121 032 067 111 110 116 114 111 108 115 115", Array("Money Controls".utf8)),
        ("001 003 002 000 078 097 188 143", [78, 97, 188]),
        ("001 012 002 000 067 082 083 045 070 049 045 086 049 046 048 057 026", Array("CRS-F1-V1.09".utf8)),
        ("001 003 002 000 001 004 002 243", [1, 4, 2]),
        ("001 006 002 000 071 066 050 048 048 065 155", Array("GB200A".utf8)),
        ("001 006 002 000 084 111 107 101 110 032 214", Array("Token ".utf8)),
        ("001 006 002 000 046 046 046 046 046 046 227", Array("......".utf8)),
        ("001 011 002 000 000 000 000 000 000 000 000 000 000 000 000 242", [UInt8](repeating: 0, count: 11)),
        ("001 011 002 000 001 001 005 000 000 000 000 000 000 000 000 235", [1, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0]),
        ("001 011 002 000 004 000 001 005 005 001 005 001 005 000 000 215", [4, 0, 1, 5, 5, 1, 5, 1, 5, 0, 0]),
    ])
    func repliesDecodeAsTheSpecShows(wire: String, data: [UInt8]) throws {
        let frame = try #require(Frame.decode(Self.bytes(wire), .simple8))
        #expect(frame == Frame(destination: 1, source: 2, header: 0, data: data))
        #expect(frame.encoded(.simple8) == Self.bytes(wire))
    }

    @Test func aWrongChecksumOrLengthIsRefused() {
        #expect(Frame.decode(Self.bytes("001 000 002 000 254"), .simple8) == nil)
        #expect(Frame.decode(Self.bytes("001 001 002 000 253"), .simple8) == nil)
        #expect(Frame.decode(Self.bytes("001 000 002 000 253 000"), .simple8) == nil)
    }

    @Test func crc16MatchesAppendix9() {
        // Reset device to address 40: CRC(40,0,1) = 0x3F46 → [40][0][70][1][63].
        #expect(Checksum.crc16([40, 0, 1]) == 0x3F46)
        let reset = Frame(destination: 40, source: nil, header: 1).encoded(.crc16)
        #expect(reset == [40, 0, 70, 1, 63])
        // ACK to the host: CRC(1,0,0) = 0x3730 → [1][0][48][0][55].
        #expect(Frame.decode([1, 0, 48, 0, 55], .crc16) == Frame(destination: 1, source: nil, header: 0))
        #expect(Frame.decode([1, 0, 48, 0, 56], .crc16) == nil)
    }

    @Test func payloadsDecode() {
        #expect(Payload.serialNumber([78, 97, 188]) == 12_345_678)
        #expect(Payload.text(Array("STD01   ".utf8)) == "STD01")
        // Bit 0 of the first byte is coin 1; bit 7 of the second is coin 16 (not MSB-first).
        #expect(Payload.inhibitMask(enabled: [1]) == [0x01, 0x00])
        #expect(Payload.inhibitMask(enabled: [2, 3, 4]) == [0x0E, 0x00])
        #expect(Payload.inhibitMask(enabled: [9, 16]) == [0x00, 0x81])
        #expect(Payload.inhibitMask(enabled: 1...16) == [0xFF, 0xFF])
        #expect(Payload.enabledPositions([0x0E, 0x80]) == [2, 3, 4, 16])
        #expect(Payload.pollingInterval([2, 20]) == 200)
        #expect(Payload.pollingInterval([1, 100]) == 100)
        #expect(Payload.pollingInterval([0, 0]) == nil)
        #expect(Payload.pollingInterval([0, 255]) == nil)
    }

    @Test(arguments: [
        ("GB200A", Int64(200), true), ("GB050B", 50, true), ("GB050B", 500, false), ("EU.05A", 5, false),
        ("KR500A", 500, true), ("XX1K0A", 1_000, true), ("XX2K5A", 2_500, true), ("XX10KA", 10_000, true),
        ("XXM10A", 100_000, true), ("XX2.5A", 25, false),
    ])
    func coinIDValues(id: String, minorUnits: Int64, matches: Bool) {
        #expect(CoinID(Array(id.utf8)).hasValue(minorUnits: minorUnits) == matches)
    }

    @Test func coinIDsWithoutAValue() {
        #expect(CoinID(Array("Token ".utf8)).hasValue(minorUnits: 25) == nil)
        #expect(CoinID(Array("TK025A".utf8)).hasValue(minorUnits: 25) == nil)
        #expect(CoinID(Array("......".utf8)).isEmpty)
        let value = CoinID(Array("XX5m0A".utf8)).value
        #expect(value?.mantissa == 50 && value?.exponent == -4)
    }
}
