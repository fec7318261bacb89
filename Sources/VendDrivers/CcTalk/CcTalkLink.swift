import CcTalk
import Synchronization
import VendHardware
import VendSerial

/// One serial link to a ccTalk bus, shared by every device on it (a coin acceptor and the
/// hoppers at their own addresses). Exchanges are strictly one at a time: a device's command and
/// its reply are never split by another's, whichever thread asks. Whoever polls the bus (the
/// coin acceptor's driver thread, when there is one) owns the link: it opens it again after a
/// loss and closes it at stop; the others only exchange, and while it is down they get the loss
/// that took it down, so each link change is logged once, by the owner.
public final class CcTalkLink: Sendable {
    public typealias Opener = @Sendable () throws(LinkError) -> any ByteStream

    private enum State {
        case up(any ByteStream)
        case down(LinkError)
        case closed
    }

    /// Where it goes, for messages: `/dev/ttyUSB0 (9600 8N1)`, `unix:/run/sim.sock`.
    public let name: String
    /// Our own bytes come back before each reply (single-wire bus): a property of the interface,
    /// so of the link, not of a device.
    let echo: Bool
    private let open: Opener
    private let state: Mutex<State>

    public init(name: String, echo: Bool, open: @escaping Opener) {
        self.name = name
        self.echo = echo
        self.open = open
        state = Mutex(.down(.cannotOpen(port: name, reason: "not opened yet")))
    }

    /// `port` as configured: a device path (at `baudRate`) or `unix:/path`.
    public convenience init(port: String, baudRate: Int, echo: Bool) {
        let address = PortAddress(port, baudRate: baudRate)
        self.init(name: "\(address)", echo: echo, open: { () throws(LinkError) in try address.open() })
    }

    /// Opens the port unless it is open. A closed link stays closed.
    public func connect() throws(LinkError) {
        try state.withLock { state throws(LinkError) in
            switch state {
            case .up: return
            case .closed: throw .disconnected(port: name, reason: "closed by vendd")
            case .down: state = .up(try open())
            }
        }
    }

    /// One command to the device `addressing` names, and its reply. A lost stream takes the link
    /// down until its owner connects it again.
    func exchange(
        _ addressing: CcTalkAddressing, _ header: Header, _ data: [UInt8],
        timeout: Duration
    ) -> Result<[UInt8], BusFailure> {
        state.withLock { state in
            let stream: any ByteStream
            switch state {
            case .up(let open): stream = open
            case .down(let loss): return .failure(.disconnected(loss))
            case .closed: return .failure(.disconnected(.disconnected(port: name, reason: "closed by vendd")))
            }
            let result = StreamBus(stream: stream, addressing: addressing, echo: echo).exchange(header, data, timeout: timeout)
            if case .failure(.disconnected(let loss)) = result {
                stream.close()
                state = .down(loss)
            }
            return result
        }
    }

    /// The bus as one device at `addressing` sees it.
    func bus(_ addressing: CcTalkAddressing) -> CcTalkBus { AddressedBus(link: self, addressing: addressing) }

    /// Releases the port for good (vendd stops or reloads).
    public func close() {
        state.withLock { state in
            if case .up(let stream) = state { stream.close() }
            state = .closed
        }
    }
}

/// A device's view of a shared link: its address, host address and checksum on every exchange.
private final class AddressedBus: CcTalkBus {
    let link: CcTalkLink
    let addressing: CcTalkAddressing

    init(link: CcTalkLink, addressing: CcTalkAddressing) {
        self.link = link
        self.addressing = addressing
    }

    func exchange(_ header: Header, _ data: [UInt8], timeout: Duration) -> Result<[UInt8], BusFailure> {
        link.exchange(addressing, header, data, timeout: timeout)
    }
}
