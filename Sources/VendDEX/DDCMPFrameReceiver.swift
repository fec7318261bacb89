/// What the other end of a DDCMP link said, as the frame receiver reads it.
public enum DDCMPToken: Sendable, Equatable {
    /// A whole message whose CRCs matched.
    case frame(DDCMPFrame)
    /// Eight bytes starting 05 or 81 whose header CRC did not match: the receiver looks for the
    /// next message from the byte after that start (§3.5.2.2).
    case badHeader
    /// A data message whose header was good but whose data was not: a wrong CRC, or cut short
    /// (an incomplete message is corrupt data, not a timeout, §3.5.2.1).
    case badData(DDCMPDataHeader, reason: String)
    /// A data message longer than the receiver takes (NACK reason 16).
    case tooLong(DDCMPDataHeader)
    /// A byte outside any message (line noise, an optical head's echo).
    case noise(UInt8)
}

/// Turns the bytes read from a DDCMP port into messages, however the reads cut them. A message
/// is framed by its first byte (05 or 81) and a header whose CRC matches (§3.4.5); anything else
/// is skipped byte by byte until one is found. Pure: the inter-character timer (65 ms, table 2)
/// is the link's, which calls `abandonMessage()` when it fires.
public struct DDCMPFrameReceiver: Sendable {
    /// The longest data a message may carry here; a longer one is refused (NACK 16).
    public let maximumLength: Int
    private var pending: [UInt8] = []
    /// The header of the data message being read, once its CRC matched.
    private var header: DDCMPDataHeader?

    public init(maximumLength: Int = 4_096) {
        self.maximumLength = min(maximumLength, DDCMPDataHeader.maximumLength)
    }

    /// Part of a message has been read (its bytes are timed by the inter-character timer).
    public var isInsideMessage: Bool { !pending.isEmpty }

    public mutating func receive(_ bytes: [UInt8]) -> [DDCMPToken] {
        var tokens: [DDCMPToken] = []
        for byte in bytes {
            pending.append(byte)
            scan(&tokens)
        }
        return tokens
    }

    /// The inter-character timer expired: what was read of a message is dropped; a data message
    /// whose header had arrived is reported as corrupt.
    public mutating func abandonMessage() -> DDCMPToken? {
        defer {
            pending.removeAll()
            header = nil
        }
        guard let header else { return nil }
        return .badData(header, reason: "the message stopped arriving (more than 65 ms between characters)")
    }

    private mutating func scan(_ tokens: inout [DDCMPToken]) {
        while let first = pending.first {
            if let header {
                let total = 8 + header.length + 2
                guard pending.count >= total else { return }
                let data = Array(pending[8..<(8 + header.length)])
                let received = UInt16(pending[total - 1]) << 8 | UInt16(pending[total - 2])
                let computed = CRC16ARC.checksum(data)
                tokens.append(
                    received == computed
                        ? .frame(.data(header, data)) : .badData(header, reason: "data CRC 0x\(hex(received)) received, 0x\(hex(computed)) computed"))
                pending.removeFirst(total)
                self.header = nil
                continue
            }
            guard first == DDCMPByte.control || first == DDCMPByte.data else {
                tokens.append(.noise(first))
                pending.removeFirst()
                continue
            }
            guard pending.count >= 8 else { return }
            let crc = UInt16(pending[7]) << 8 | UInt16(pending[6])
            guard CRC16ARC.checksum(pending[0..<6]) == crc else {
                tokens.append(.badHeader)
                pending.removeFirst()
                continue
            }
            if first == DDCMPByte.control {
                tokens.append(
                    .frame(.control(DDCMPControl(type: pending[1], flags: pending[2], number: pending[3], fill: pending[4], address: pending[5]))))
                pending.removeFirst(8)
                continue
            }
            let header = DDCMPDataHeader(header: pending[0..<6])
            if header.length > maximumLength {
                tokens.append(.tooLong(header))
                pending.removeFirst(8)
                continue
            }
            self.header = header
        }
    }
}
