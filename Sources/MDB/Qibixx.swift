/// The Qibixx MDB-USB / MDB Pi HAT generic master API: ASCII lines at 115200 8N1, hex with two
/// digits per byte (docs.qibixx.com "API general", "generic master"). Lines the host sends end in
/// `\n`; lines it receives may end in `\n` or `\r\n`.
public enum QibixxCommand: Sendable, Equatable {
    /// `M,1` / `M,0`: start or stop master mode, answered `m,ACK`.
    case masterMode(Bool)
    /// `R,RESET`: hold the bus in break for a bus reset of every peripheral (§2.2).
    case busReset
    /// `R,xx[,yyyy]`: one block to the bus; answered `p,ACK`, `p,NACK` (no answer) or `p,<hex>`.
    case transact(MDBBlock)

    public var line: String {
        switch self {
        case .masterMode(let on): on ? "M,1" : "M,0"
        case .busReset: "R,RESET"
        case .transact(let block):
            "R," + Hex.encode([block.addressByte]) + (block.data.isEmpty ? "" : "," + Hex.encode(block.data))
        }
    }

    public var encoded: [UInt8] { Array((line + "\n").utf8) }

    /// Reads a line as the interface would (the simulator's side). Case-insensitive hex.
    public static func parse<S: StringProtocol>(_ text: S) -> QibixxCommand? {
        let fields = String(text).split(separator: Character(","), omittingEmptySubsequences: false).map(String.init)
        switch (fields.first?.uppercased(), fields.count) {
        case ("M", 2) where fields[1] == "1" || fields[1] == "0": return .masterMode(fields[1] == "1")
        case ("R", 2) where fields[1].uppercased() == "RESET": return .busReset
        case ("R", 2...3):
            guard let address = Hex.decode(fields[1]), address.count == 1 else { return nil }
            let data = fields.count == 3 ? Hex.decode(fields[2]) : []
            guard let data, data.count <= 34 else { return nil }
            return .transact(MDBBlock(address[0], data))
        default: return nil
        }
    }
}

/// One line from the interface.
public enum QibixxReply: Sendable, Equatable {
    /// `m,ACK` / `m,NACK`: master mode switched, or the parameter refused.
    case masterMode(accepted: Bool)
    /// `p,…`: the peripheral's answer to an `R` command. `p,NACK` is silence (or a NAK) on the bus.
    case peripheral(MDBAnswer)
    /// `p,ACK` after `R,RESET` is the only documented form; anything else the interface says
    /// (version lines, errors, sniffer output) is kept for the log.
    case other(String)

    /// The reply to `line` (without its terminator). Throws for a `p,` or `m,` line that is not
    /// one of the documented forms: that is a garbled line, and a garbled `p,` line may have been
    /// a coin the interface already ACKed on the bus — the caller must say so.
    public static func parse<S: StringProtocol>(_ line: S) throws(QibixxLineError) -> QibixxReply {
        let text = String(line)
        // Bytes, not Characters: a combining mark after the comma (noise) makes `,` and the mark
        // one Character, which must not turn a garbled answer into chatter.
        let bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes[1] == UInt8(ascii: ",") else { return .other(text) }
        let body = bytes[2...]
        switch bytes[0] {
        case UInt8(ascii: "m"):
            switch asciiUppercased(body) {
            case "ACK": return .masterMode(accepted: true)
            case "NACK": return .masterMode(accepted: false)
            default: throw QibixxLineError(line: text, reason: "m, is followed by neither ACK nor NACK")
            }
        case UInt8(ascii: "p"):
            switch asciiUppercased(body) {
            case "ACK": return .peripheral(.ack)
            case "NACK": return .peripheral(.noAnswer)
            case "": throw QibixxLineError(line: text, reason: "p, without data")
            default:
                guard let data = Hex.decode(String(decoding: body, as: UTF8.self)) else {
                    throw QibixxLineError(line: text, reason: "p, data is not whole hex bytes")
                }
                guard data.count <= 36 else { throw QibixxLineError(line: text, reason: "p, data longer than an MDB block (36 bytes)") }
                return .peripheral(.data(data))
            }
        default:
            return .other(text)
        }
    }

    /// Only ASCII letters change case: no other character may pass for `ACK`.
    private static func asciiUppercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
    }

    /// The interface's side of the codec (for the simulator).
    public var line: String {
        switch self {
        case .masterMode(let accepted): accepted ? "m,ACK" : "m,NACK"
        case .peripheral(.ack): "p,ACK"
        case .peripheral(.noAnswer): "p,NACK"
        case .peripheral(.data(let bytes)): "p," + Hex.encode(bytes)
        case .other(let text): text
        }
    }
}

public struct QibixxLineError: Error, Equatable, CustomStringConvertible {
    public let line: String
    public let reason: String

    public var description: String { "garbled line from the MDB interface '\(line)': \(reason)" }
}

/// Splits a byte stream into lines, dropping `\r`. A line longer than `limit` is noise (a wrong
/// baud rate shows as one endless line): it is cut and counted, never kept growing.
public struct LineSplitter: Sendable {
    public static let limit = 200
    private var pending: [UInt8] = []
    public private(set) var overlongLines = 0

    public init() {}

    public mutating func receive(_ bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n"):
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
            case UInt8(ascii: "\r"):
                continue
            default:
                if pending.count == Self.limit {
                    overlongLines += 1
                    pending.removeAll(keepingCapacity: true)
                }
                pending.append(byte)
            }
        }
        return lines
    }

    public mutating func clear() { pending.removeAll() }
}
