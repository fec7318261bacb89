/// CRC-16/ARC: polynomial x¹⁶+x¹⁵+x²+1 processed reflected (0xA001), initial value 0, no final
/// XOR. It is the CRC that real EVA-DTS files carry in G85 (research notes §6.1; CRC-16/MODBUS,
/// which starts from 0xFFFF, does not match them).
public enum CRC16ARC {
    private static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        return crc
    }

    public static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt16 where Bytes.Element == UInt8 {
        bytes.reduce(UInt16(0)) { crc, byte in (crc >> 8) ^ table[Int((crc ^ UInt16(byte)) & 0xFF)] }
    }
}
