/// CRC-32 as zlib computes it (IEEE 802.3, reflected polynomial 0xEDB88320), table-driven.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { byte in
        (0..<8).reduce(UInt32(byte)) { crc, _ in crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }

    /// The checksum of `bytes`; pass the checksum of the bytes before them to continue it.
    static func checksum(_ bytes: some Sequence<UInt8>, continuing previous: UInt32 = 0) -> UInt32 {
        ~bytes.reduce(~previous) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }

    /// Exactly 8 lowercase hex digits, as the files store it.
    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The inverse of `hex`: nil unless the text is exactly 8 lowercase hex digits.
    static func parse(_ text: some StringProtocol) -> UInt32? {
        guard text.utf8.count == 8, text.allSatisfy({ "0123456789abcdef".contains($0) }) else { return nil }
        return UInt32(text, radix: 16)
    }
}
