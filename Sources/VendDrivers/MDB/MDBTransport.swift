import MDB
import VendHardware
import VendPOSIX
import VendSerial

/// Why the master interface itself (not a peripheral) failed: the link must be opened again.
public enum MDBLinkFailure: Error, Equatable, CustomStringConvertible {
    case disconnected(LinkError)
    /// The interface did not answer a command line in time: unplugged, hung, or not a Qibixx
    /// master interface at that port.
    case interfaceSilent(command: String)
    /// `m,NACK` to `M,1`, or an answer of the wrong kind.
    case refused(command: String, answer: String)

    public var description: String {
        switch self {
        case .disconnected(let error): "\(error)"
        case .interfaceSilent(let command):
            "the MDB interface did not answer '\(command)' (unplugged, hung, or not a Qibixx MDB master at this port?)"
        case .refused(let command, let answer): "the MDB interface answered '\(command)' with '\(answer)'"
        }
    }
}

/// One MDB master: bus reset and one transaction at a time. Implemented over the Qibixx line
/// API; a direct 9-bit UART master would be another conformer.
public protocol MDBTransport: AnyObject {
    /// Puts the interface in master mode. Called once per connection.
    func start() throws(MDBLinkFailure)
    func busReset() throws(MDBLinkFailure)
    /// Sends `block` and returns the peripheral's answer; the interface has already ACKed data.
    func transact(_ block: MDBBlock) throws(MDBLinkFailure) -> MDBAnswer
}

/// The Qibixx generic master over a byte stream (USB CDC-ACM or a Unix socket). Lines that are
/// not answers (version, errors, sniffer output) are passed to `heard`; a garbled `p,` line is
/// reported loudly there too, since the interface already ACKed whatever the peripheral sent.
final class QibixxTransport: MDBTransport {
    /// The interface waits at most a few ms per bus transaction; USB adds little. Generous, so a
    /// busy host does not take a slow reply for an unplugged interface.
    static let answerTimeout: Duration = .milliseconds(500)

    private let stream: ByteStream
    private let heard: (String, _ isFault: Bool) -> Void
    private var splitter = LineSplitter()

    init(stream: ByteStream, heard: @escaping (String, Bool) -> Void) {
        self.stream = stream
        self.heard = heard
    }

    func start() throws(MDBLinkFailure) {
        // A line half-typed by an earlier host would garble the first command.
        stream.discardInput()
        switch try exchange(.masterMode(true)) {
        case .masterMode(accepted: true): return
        case let other: throw .refused(command: "M,1", answer: other.line)
        }
    }

    func busReset() throws(MDBLinkFailure) {
        switch try exchange(.busReset) {
        case .peripheral: return
        case let other: throw .refused(command: "R,RESET", answer: other.line)
        }
    }

    func transact(_ block: MDBBlock) throws(MDBLinkFailure) -> MDBAnswer {
        let command = QibixxCommand.transact(block)
        switch try exchange(command) {
        case .peripheral(let answer): return answer
        case let other: throw .refused(command: command.line, answer: other.line)
        }
    }

    /// Sends one line and waits for the `m,` or `p,` line answering it.
    private func exchange(_ command: QibixxCommand) throws(MDBLinkFailure) -> QibixxReply {
        do {
            try stream.write(command.encoded)
        } catch {
            throw .disconnected(error)
        }
        let deadline = MonotonicClock.now + Self.answerTimeout
        while true {
            let left = deadline - MonotonicClock.now
            guard left > .zero else { throw .interfaceSilent(command: command.line) }
            switch Waiter.waitReadable(stream.fileDescriptor, timeout: left) {
            case .readable, .hangUp:
                let bytes: [UInt8]
                do { bytes = try stream.readAvailable() } catch { throw .disconnected(error) }
                for line in splitter.receive(bytes) {
                    do {
                        let reply = try QibixxReply.parse(line)
                        if case .other(let text) = reply {
                            if !text.isEmpty { heard("MDB interface says: \(text)", false) }
                            continue
                        }
                        return reply
                    } catch {
                        heard("MDB interface: \(error): if it was a coin or bill it was NOT credited; check the cable and the interface", true)
                        return .peripheral(.noAnswer)
                    }
                }
            case .woken, .timedOut:
                continue
            }
        }
    }
}
