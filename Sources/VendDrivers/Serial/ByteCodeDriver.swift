import VendHardware
import VendSerial
import VendSettings
import VendingCore

/// The one-byte protocol of simple acceptors: each byte received is the channel of a coin just
/// accepted. There is no event counter and no inhibit command, so exactly-once is weaker than
/// with ccTalk: a byte is credited once when read (never twice: it cannot be read again), but a
/// coin whose byte arrives while vendd is not reading is lost. See README "Coin acceptor".
struct ByteCodeDriver: Sendable {
    let port: PortAddress
    let channels: [CoinChannel]

    var source: String { "bytecode:\(port.path)" }

    func run(_ context: DriverContext) {
        var health = LinkHealth()
        var backoff = Backoff()
        var sequence = context.lastSequence(source) ?? 0
        var warnedAboutInhibit = false
        while !context.control.isStopping {
            let stream: ByteStream
            do {
                stream = try port.open()
            } catch {
                health.down("\(error)", context.emit)
                context.control.sleep(backoff.next())
                continue
            }
            health.up("one-byte acceptor connected on \(port)", context.emit)
            backoff.reset()
            while !context.control.isStopping {
                if !context.control.wantsAcceptance, !warnedAboutInhibit {
                    warnedAboutInhibit = true
                    context.emit(
                        .notice(
                            "the bytecode protocol cannot inhibit the acceptor: coins it still takes are credited. Wire its inhibit input if the machine must refuse coins",
                            isFault: false))
                }
                let outcome = context.control.waiter.wait(for: stream.fileDescriptor, timeout: .seconds(60))
                guard outcome == .readable || outcome == .hangUp else { continue }
                do {
                    for byte in try stream.readAvailable() {
                        credit(byte, sequence: &sequence, context)
                    }
                } catch {
                    health.down("\(error)", context.emit)
                    break
                }
            }
            stream.close()
        }
    }

    private func credit(_ byte: UInt8, sequence: inout UInt64, _ context: DriverContext) {
        guard let channel = channels.first(where: { $0.channel == Int(byte) }) else {
            context.emit(
                .notice(
                    "byte \(byte) from the acceptor is not a channel in coin_acceptor.channels: ignored (noise, or a coin to add to the table)",
                    isFault: true))
            return
        }
        sequence += 1
        context.emit(
            .accepted(
                AcceptedCoin(
                    channel: channel.channel, value: channel.value,
                    event: CoinEventID(source: source, sequence: sequence))))
    }
}

extension PortAddress {
    /// The port as written, for naming an event source.
    var path: String {
        switch self {
        case .serial(let path, _): path
        case .unixSocket(let path): PortAddress.unixPrefix + path
        }
    }
}
