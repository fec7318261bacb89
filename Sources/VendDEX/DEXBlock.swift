/// The DEX/UCS link's characters and blocks (EVA-DTS 6.1.1 §4.4, ANSI X3.28 framing): what goes
/// on the wire, built and checked here and nowhere else.
public enum DEXByte {
    public static let soh: UInt8 = 0x01
    public static let stx: UInt8 = 0x02
    public static let etx: UInt8 = 0x03
    public static let eot: UInt8 = 0x04
    public static let enq: UInt8 = 0x05
    public static let dle: UInt8 = 0x10
    public static let nak: UInt8 = 0x15
    public static let syn: UInt8 = 0x16
    public static let etb: UInt8 = 0x17
    /// After DLE: ACK0 '0', ACK1 '1', WACK ';'.
    public static let ack0: UInt8 = 0x30
    public static let ack1: UInt8 = 0x31
    public static let wack: UInt8 = 0x3B
}

/// One framed block: a handshake (DLE SOH … DLE ETX) or audit/configuration data (DLE STX … DLE
/// ETB, the last one DLE ETX), with the CRC-16 sent low byte first.
public struct DEXBlock: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// DLE SOH: the first and second handshakes.
        case handshake
        /// DLE STX: the data session.
        case data
    }

    public let kind: Kind
    public let payload: [UInt8]
    /// Ends DLE ETX: the last block of its session.
    public let isLast: Bool

    /// A block holds at most 245 bytes from after DLE STX through DLE ETB/ETX (§4.4).
    public static let maximumPayload = 245 - 2

    public init(kind: Kind, payload: [UInt8], isLast: Bool) {
        self.kind = kind
        self.payload = payload
        self.isLast = isLast
    }

    /// The block's CRC: over the payload and its ETB/ETX, without DLE or SYN (§4.4).
    public var crc: UInt16 {
        CRC16ARC.checksum(payload.filter { $0 != DEXByte.dle && $0 != DEXByte.syn } + [isLast ? DEXByte.etx : DEXByte.etb])
    }

    /// The bytes on the wire. A DLE in the payload is doubled (X3.28 transparency); audit text
    /// never holds one.
    public var bytes: [UInt8] {
        let start = kind == .handshake ? DEXByte.soh : DEXByte.stx
        let end = isLast ? DEXByte.etx : DEXByte.etb
        let body = payload.flatMap { $0 == DEXByte.dle ? [DEXByte.dle, DEXByte.dle] : [$0] }
        return [DEXByte.dle, start] + body + [DEXByte.dle, end, UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// `text` cut into data blocks of at most `maximumPayload` bytes; the last ends with ETX.
    public static func dataBlocks(_ text: [UInt8]) -> [DEXBlock] {
        let chunks = stride(from: 0, to: max(text.count, 1), by: maximumPayload).map { start in
            Array(text[start..<min(start + maximumPayload, text.count)])
        }
        return chunks.enumerated().map { index, chunk in
            DEXBlock(kind: .data, payload: chunk, isLast: index == chunks.count - 1)
        }
    }
}
