/// Enhanced DDCMP on the wire (EVA-DTS 6.1.1 chapter 3): the messages, built and checked here
/// and nowhere else. Every message starts with a 6-byte header and its CRC-16 (the same
/// CRC-16/ARC as DEX/UCS, §3.4.5, low byte first); a data message's header is followed by its
/// data and a second CRC-16 over the data only.
public enum DDCMPByte {
    /// §3.6.1: the first byte of a control message and of a data message header.
    public static let control: UInt8 = 0x05
    public static let data: UInt8 = 0x81
    /// §3.6.1: the first byte of a data message's data: a command, a command's response, a
    /// block of the data file.
    public static let command: UInt8 = 0x77
    public static let response: UInt8 = 0x88
    public static let dataBlock: UInt8 = 0x99
    /// §3.6.2 (table 3, byte 3): the quick sync flag, "always set to 1" on an asynchronous link;
    /// in a data header the select flag marks the last block (§3.6.3, §6.1.3).
    public static let quickSync: UInt8 = 0x40
    public static let select: UInt8 = 0x80
    /// §3.6.2.1: the point-to-point address every slave answers (EVA-DTS 4.1 compatibility),
    /// and table 4's default address of a vending machine.
    public static let pointToPoint: UInt8 = 0x01
    public static let vendingMachine: UInt8 = 0x07
}

/// The control messages of §3.6.2: `05 type flags number fill address` + CRC-16.
public struct DDCMPControl: Sendable, Equatable {
    public enum Kind: UInt8, Sendable, Equatable {
        case ack = 0x01
        case nack = 0x02
        case start = 0x06
        case stack = 0x07
    }

    /// NACK reasons (§3.6.2 table 3, byte 3's low six bits).
    public enum NACKReason: UInt8, Sendable, Equatable {
        case headerCRC = 1
        case dataCRC = 2
        case bufferUnavailable = 8
        case receiveOverrun = 9
        case tooLong = 16
        case headerFormat = 17
    }

    /// Byte 2; unknown kinds are kept as read (and ignored by the link).
    public let type: UInt8
    /// Byte 3: the select and quick sync flags, and a NACK's reason in the low six bits.
    public let flags: UInt8
    /// Byte 4: the number of the last data message received correctly; in STACK the slave's
    /// baud rate code (`sbd`).
    public let number: UInt8
    /// Byte 5: zero, except the master's requested baud rate code (`mbd`) in START and STACK.
    public let fill: UInt8
    /// Byte 6: the station address (§3.6.2.1).
    public let address: UInt8

    public var kind: Kind? { Kind(rawValue: type) }

    public init(type: UInt8, flags: UInt8, number: UInt8, fill: UInt8, address: UInt8) {
        self.type = type
        self.flags = flags
        self.number = number
        self.fill = fill
        self.address = address
    }

    public init(_ kind: Kind, number: UInt8 = 0, fill: UInt8 = 0, reason: NACKReason? = nil, address: UInt8) {
        self.init(type: kind.rawValue, flags: DDCMPByte.quickSync | (reason?.rawValue ?? 0), number: number, fill: fill, address: address)
    }

    public var header: [UInt8] { [DDCMPByte.control, type, flags, number, fill, address] }
    public var bytes: [UInt8] { DDCMPFrame.withCRC(header) }
}

/// A data message's header (§3.6.3): `81 nn mm rr xx address` + CRC-16, where the length of the
/// data is 14 bits (nn the low byte, mm's low six bits the high ones) and mm's top bits are the
/// select ("last block") and quick sync flags.
public struct DDCMPDataHeader: Sendable, Equatable {
    public let length: Int
    /// The select flag: the last block of a data file (§3.6.3 byte 3, §6.2.1.9).
    public let isLast: Bool
    /// The number of the last data message received correctly.
    public let received: UInt8
    /// The number of this message.
    public let number: UInt8
    public let address: UInt8

    /// 14 bits of length: the protocol's limit for one message.
    public static let maximumLength = 0x3FFF

    public init(length: Int, isLast: Bool, received: UInt8, number: UInt8, address: UInt8) {
        precondition((0...Self.maximumLength).contains(length), "a DDCMP data message holds at most 16383 bytes")
        self.length = length
        self.isLast = isLast
        self.received = received
        self.number = number
        self.address = address
    }

    /// Reads a header whose CRC was checked.
    init(header: ArraySlice<UInt8>) {
        let bytes = Array(header)
        length = Int(bytes[1]) | Int(bytes[2] & 0x3F) << 8
        isLast = bytes[2] & DDCMPByte.select != 0
        received = bytes[3]
        number = bytes[4]
        address = bytes[5]
    }

    public var header: [UInt8] {
        let flags = DDCMPByte.quickSync | (isLast ? DDCMPByte.select : 0)
        return [DDCMPByte.data, UInt8(length & 0xFF), flags | UInt8(length >> 8), received, number, address]
    }
}

/// One whole message as read or sent.
public enum DDCMPFrame: Sendable, Equatable {
    case control(DDCMPControl)
    case data(DDCMPDataHeader, [UInt8])

    /// A data message of `data` with its header.
    public static func data(_ data: [UInt8], isLast: Bool = false, received: UInt8, number: UInt8, address: UInt8) -> DDCMPFrame {
        .data(DDCMPDataHeader(length: data.count, isLast: isLast, received: received, number: number, address: address), data)
    }

    public var bytes: [UInt8] {
        switch self {
        case .control(let control): control.bytes
        case .data(let header, let data): Self.withCRC(header.header) + Self.withCRC(data)
        }
    }

    /// `bytes` followed by their CRC-16, low byte first (§3.6.4.1).
    public static func withCRC(_ bytes: [UInt8]) -> [UInt8] {
        let crc = CRC16ARC.checksum(bytes)
        return bytes + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }
}
