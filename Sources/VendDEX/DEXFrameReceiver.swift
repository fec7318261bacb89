/// What the other end of a DEX link said, as the frame receiver reads it.
public enum DEXToken: Sendable, Equatable {
    case enq
    case eot
    case nak
    /// DLE '0' or DLE '1': `number` is 0 or 1.
    case ack(number: Int)
    /// DLE ';': the receiver is not ready yet.
    case wack
    /// A whole block whose CRC matched.
    case block(DEXBlock)
    /// A block that cannot be taken: the reason names what was wrong (the link NAKs it).
    case badBlock(String)
    /// A byte outside any frame that means nothing here (line noise, a handheld's chatter).
    case noise(UInt8)
}

/// Turns the bytes read from a DEX port into tokens, however the reads cut them. Pure: the
/// inter-character timer (Timer B) is the link's, which calls `abandonBlock()` when it fires.
public struct DEXFrameReceiver: Sendable {
    private enum State: Sendable, Equatable {
        case between
        /// DLE seen outside a block.
        case escape
        case inBlock(kind: DEXBlock.Kind, payload: [UInt8], afterDLE: Bool)
        case crc(block: DEXBlock, low: UInt8?)
    }

    private var state = State.between

    public init() {}

    /// Inside a block (its bytes are timed by Timer B).
    public var isInsideBlock: Bool { state != .between }

    public mutating func receive(_ bytes: [UInt8]) -> [DEXToken] {
        var tokens: [DEXToken] = []
        for byte in bytes { if let token = receive(byte) { tokens.append(token) } }
        return tokens
    }

    /// Timer B expired inside a block: what was read of it is dropped, and reported.
    public mutating func abandonBlock() -> DEXToken? {
        defer { state = .between }
        switch state {
        case .between, .escape: return nil
        case .inBlock, .crc: return .badBlock("the block stopped arriving (more than 100 ms between characters)")
        }
    }

    private mutating func receive(_ byte: UInt8) -> DEXToken? {
        switch state {
        case .between:
            switch byte {
            case DEXByte.enq: return .enq
            case DEXByte.eot: return .eot
            case DEXByte.nak: return .nak
            case DEXByte.dle: state = .escape
            default: return .noise(byte)
            }
        case .escape:
            state = .between
            switch byte {
            case DEXByte.ack0: return .ack(number: 0)
            case DEXByte.ack1: return .ack(number: 1)
            case DEXByte.wack: return .wack
            case DEXByte.soh: state = .inBlock(kind: .handshake, payload: [], afterDLE: false)
            case DEXByte.stx: state = .inBlock(kind: .data, payload: [], afterDLE: false)
            case DEXByte.dle: state = .escape
            default: return .noise(byte)
            }
        case .inBlock(let kind, var payload, let afterDLE):
            if afterDLE {
                switch byte {
                case DEXByte.etb, DEXByte.etx:
                    state = .crc(block: DEXBlock(kind: kind, payload: payload, isLast: byte == DEXByte.etx), low: nil)
                    return nil
                // DLE SYN: the sender keeps the block alive while it pauses (Timer B).
                case DEXByte.syn: break
                case DEXByte.dle: payload.append(byte)
                default:
                    state = .between
                    return .badBlock("DLE followed by 0x\(hex(byte)) inside a block")
                }
            } else if byte == DEXByte.dle {
                state = .inBlock(kind: kind, payload: payload, afterDLE: true)
                return nil
            } else if byte > 0x7E {
                state = .between
                return .badBlock("a byte 0x\(hex(byte)) that is not 7-bit ASCII inside a block")
            } else {
                payload.append(byte)
            }
            guard payload.count <= DEXBlock.maximumPayload else {
                state = .between
                return .badBlock("a block longer than \(DEXBlock.maximumPayload + 2) bytes")
            }
            state = .inBlock(kind: kind, payload: payload, afterDLE: false)
        case .crc(let block, let low):
            guard let low else {
                state = .crc(block: block, low: byte)
                return nil
            }
            state = .between
            let received = UInt16(byte) << 8 | UInt16(low)
            guard received == block.crc else {
                return .badBlock("CRC 0x\(hex(received)) received, 0x\(hex(block.crc)) computed")
            }
            return .block(block)
        }
        return nil
    }
}

func hex<Value: BinaryInteger>(_ value: Value) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    let width = Value.self == UInt8.self ? 2 : 4
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
