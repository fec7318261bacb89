/// How a ccTalk packet is protected (ccTalk Part 1 §7.1, §7.2).
public enum FrameChecksum: Sendable, Equatable {
    /// `[dest][N][source][header][data…][sum]`: every byte, checksum included, adds up to 0 mod 256.
    case simple8
    /// `[dest][N][CRC lsb][header][data…][CRC msb]`: CRC-CCITT (0x1021, init 0) over dest, N,
    /// header and data. The source field carries the CRC, so replies name no source.
    case crc16
}

/// One ccTalk packet, either way along the bus.
public struct Frame: Sendable, Equatable, CustomStringConvertible {
    public let destination: UInt8
    /// nil in CRC-16 packets, whose source byte holds half the CRC.
    public let source: UInt8?
    public let header: UInt8
    public let data: [UInt8]

    public init(destination: UInt8, source: UInt8?, header: UInt8, data: [UInt8] = []) {
        precondition(data.count <= 255, "a ccTalk packet carries at most 255 data bytes")
        self.destination = destination
        self.source = source
        self.header = header
        self.data = data
    }

    /// The bytes on the wire.
    public func encoded(_ checksum: FrameChecksum) -> [UInt8] {
        let length = UInt8(data.count)
        switch checksum {
        case .simple8:
            var bytes = [destination, length, source ?? 1, header] + data
            bytes.append(Checksum.simple8(bytes))
            return bytes
        case .crc16:
            let crc = Checksum.crc16([destination, length, header] + data)
            return [destination, length, UInt8(crc & 0xFF), header] + data + [UInt8(crc >> 8)]
        }
    }

    /// The whole packet's length on the wire, read from its second byte.
    public static func wireLength(dataLength: UInt8) -> Int { Int(dataLength) + 5 }

    /// Parses one complete packet; nil when its checksum is wrong or its length does not match.
    public static func decode(_ bytes: [UInt8], _ checksum: FrameChecksum) -> Frame? {
        guard bytes.count >= 5, bytes.count == wireLength(dataLength: bytes[1]) else { return nil }
        let data = Array(bytes[4..<(bytes.count - 1)])
        switch checksum {
        case .simple8:
            guard Checksum.simple8(bytes) == 0 else { return nil }
            return Frame(destination: bytes[0], source: bytes[2], header: bytes[3], data: data)
        case .crc16:
            let crc = Checksum.crc16([bytes[0], bytes[1], bytes[3]] + data)
            guard UInt8(crc & 0xFF) == bytes[2], UInt8(crc >> 8) == bytes[bytes.count - 1] else { return nil }
            return Frame(destination: bytes[0], source: nil, header: bytes[3], data: data)
        }
    }

    public var description: String {
        "[\(destination) \(data.count) \(source.map(String.init) ?? "crc") \(header)\(data.isEmpty ? "" : " ")\(data.map(String.init).joined(separator: " "))]"
    }
}

public enum Checksum {
    /// The byte that makes the packet add up to zero (mod 256); 0 over a whole valid packet.
    public static func simple8(_ bytes: some Sequence<UInt8>) -> UInt8 {
        0 &- bytes.reduce(0, &+)
    }

    /// CRC-16/XMODEM as ccTalk uses it: polynomial 0x1021, initial value 0, MSB first.
    public static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
