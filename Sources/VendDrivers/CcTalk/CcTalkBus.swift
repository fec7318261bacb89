import CcTalk
import VendHardware
import VendSerial

/// Why one command got no usable reply.
public enum BusFailure: Error, Equatable, CustomStringConvertible {
    /// Nothing valid came back in time: device off or unplugged, wrong address, baud or checksum,
    /// or the device dropped a packet it found corrupt (it stays silent then, Part 1 §12).
    case noReply(discardedBytes: Int)
    /// With `echo: true`, the bytes that came back are not the ones sent: two talkers on the bus
    /// or a wiring fault. `heard` is empty when no echo came at all.
    case echoMismatch(sent: [UInt8], heard: [UInt8])
    /// A valid packet for us from another address.
    case wrongSource(UInt8)
    /// NAK, BUSY or a header that is not a reply.
    case refused(header: UInt8)
    case disconnected(LinkError)

    public var description: String {
        switch self {
        case .noReply(0): "no reply"
        case .noReply(let bytes): "no valid reply (\(bytes) stray or corrupt byte(s) dropped)"
        case .echoMismatch(let sent, let heard) where heard.isEmpty:
            "no echo of the \(sent.count) bytes sent (is the interface really single-wire? set cctalk.echo: false if not)"
        case .echoMismatch(let sent, let heard):
            "echo mismatch: sent \(sent), heard \(heard) (bus contention or a wiring fault)"
        case .wrongSource(let source): "reply from address \(source) (another device on the bus, or a spoofer)"
        case .refused(let header): header == Header.nak.rawValue ? "NAK" : header == Header.busy.rawValue ? "BUSY" : "reply header \(header)"
        case .disconnected(let error): "\(error)"
        }
    }

    /// A failure worth repeating the command for (the reply may come right the next time).
    var isTransient: Bool {
        if case .disconnected = self { return false }
        return true
    }
}

/// One command, one reply: the seam between the ccTalk host logic and the wire.
public protocol CcTalkBus: AnyObject {
    func exchange(_ header: Header, _ data: [UInt8], timeout: Duration) -> Result<[UInt8], BusFailure>
}

/// Who talks to whom, and how packets are protected.
public struct CcTalkAddressing: Sendable, Equatable {
    public let device: UInt8
    public let host: UInt8
    public let checksum: FrameChecksum

    public init(device: UInt8, host: UInt8, checksum: FrameChecksum) {
        self.device = device
        self.host = host
        self.checksum = checksum
    }

    public func request(_ header: Header, _ data: [UInt8]) -> [UInt8] {
        Frame(destination: device, source: host, header: header.rawValue, data: data).encoded(checksum)
    }

    /// The reply's data, after checking who sent it and that it is a plain reply.
    public func check(_ reply: Frame) -> Result<[UInt8], BusFailure> {
        if let source = reply.source, source != device { return .failure(.wrongSource(source)) }
        guard reply.header == Header.reply.rawValue else { return .failure(.refused(header: reply.header)) }
        return .success(reply.data)
    }

    public func receiver() -> FrameReceiver { FrameReceiver(checksum: checksum, destination: host) }
}
