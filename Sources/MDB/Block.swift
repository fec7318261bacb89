/// One VMC → peripheral block of the Multi-Drop Bus (MDB/ICP 4.2 §2.2): the address byte (bits
/// 7..3 the peripheral, bits 2..0 the command) and the data bytes. The CHK is computed, never
/// stored: the Qibixx interface adds it on the wire.
public struct MDBBlock: Sendable, Equatable, CustomStringConvertible {
    public let addressByte: UInt8
    public let data: [UInt8]

    public init(_ addressByte: UInt8, _ data: [UInt8] = []) {
        precondition(data.count <= 34, "an MDB block holds at most 36 bytes with address and CHK (§2.2)")
        self.addressByte = addressByte
        self.data = data
    }

    public init(peripheral: MDBPeripheral, command: UInt8, _ data: [UInt8] = []) {
        precondition(command < 8, "MDB command numbers are 0-7 (§2.3)")
        self.init(peripheral.rawValue | command, data)
    }

    public var peripheral: UInt8 { addressByte & 0xF8 }
    public var command: UInt8 { addressByte & 0x07 }

    /// Sum of the address and data bytes, carry dropped (§2.2).
    public var checksum: UInt8 { data.reduce(addressByte, &+) }

    /// The bytes on the wire, CHK last (what a raw 9-bit UART master would send).
    public var wireBytes: [UInt8] { [addressByte] + data + [checksum] }

    public var description: String { Hex.encode([addressByte]) + (data.isEmpty ? "" : " " + Hex.encode(data)) }
}

/// Peripheral addresses used by vendd (§2.3).
public enum MDBPeripheral: UInt8, Sendable, CaseIterable {
    case coinChanger = 0x08
    case cashless1 = 0x10
    case billValidator = 0x30
    case cashless2 = 0x60

    public var name: String {
        switch self {
        case .coinChanger: "coin changer (08h)"
        case .cashless1: "cashless device #1 (10h)"
        case .billValidator: "bill validator (30h)"
        case .cashless2: "cashless device #2 (60h)"
        }
    }
}

/// What one transaction came back with. A NAK from the peripheral means "bad checksum" only
/// (§A3 A3•7) and is treated like silence, as the Qibixx interface reports both as `p,NACK`.
public enum MDBAnswer: Sendable, Equatable, CustomStringConvertible {
    case ack
    /// The peripheral's data block, CHK checked and removed.
    case data([UInt8])
    case noAnswer

    public var description: String {
        switch self {
        case .ack: "ACK"
        case .data(let bytes): "data \(Hex.encode(bytes))"
        case .noAnswer: "no answer"
        }
    }
}

/// Two hex digits per byte, no separators (the Qibixx API's form).
public enum Hex {
    private static let digits = Array("0123456789ABCDEF".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Case-insensitive; nil for an odd length or a character that is not a hex digit.
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Multi-byte numbers are most significant byte first (§2.4.2).
enum BigEndian {
    static func uint16(_ bytes: [UInt8], at index: Int) -> UInt16 {
        UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    static func bytes(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func bytes32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// The country/currency code of SETUP answers (§5.2 Z2–Z3, §6.2, Appendix 1): four packed BCD
/// digits; a leading 1 means ISO 4217 numeric (KRW `1410`), a leading 0 a telephone code.
public struct MDBCurrencyCode: Sendable, Equatable, CustomStringConvertible {
    public let raw: UInt16

    public init(raw: UInt16) { self.raw = raw }

    /// An ISO 4217 numeric code (0…999) in MDB's form: BCD `1` then its three digits.
    public init(iso4217Numeric numeric: Int) {
        raw = UInt16([numeric / 100, numeric / 10 % 10, numeric % 10].reduce(1) { $0 << 4 | $1 })
    }

    /// The ISO 4217 numeric code, when the code is in that form and valid BCD.
    public var iso4217Numeric: Int? {
        let digits = [raw >> 12, raw >> 8 & 0xF, raw >> 4 & 0xF, raw & 0xF].map(Int.init)
        guard digits[0] == 1, digits.allSatisfy({ $0 <= 9 }) else { return nil }
        return digits[1] * 100 + digits[2] * 10 + digits[3]
    }

    public var description: String {
        iso4217Numeric.map { "ISO 4217 \($0)" } ?? "country code \(Hex.encode(BigEndian.bytes(raw)))"
    }
}

/// Why a peripheral's data block cannot be read.
public struct MDBDecodeError: Error, Equatable, CustomStringConvertible {
    public let what: String
    public let bytes: [UInt8]

    public init(_ what: String, _ bytes: [UInt8]) {
        self.what = what
        self.bytes = bytes
    }

    public var description: String { "\(what) (got \(bytes.count) byte(s): \(Hex.encode(bytes)))" }
}

/// The 16 per-type bytes that several answers end with (coin/bill credits, tube counts, payout
/// counts): bytes not sent count as 0 (§5.2, §5.3).
func sixteen(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    Array(bytes.prefix(16)) + [UInt8](repeating: 0, count: max(0, 16 - bytes.count))
}

/// Bit n of a 16-bit mask = type n.
func types(in mask: UInt16) -> [Int] { (0..<16).filter { mask & (1 << $0) != 0 } }
func mask(of types: [Int]) -> UInt16 { types.reduce(0) { $0 | 1 << UInt16($1) } }
