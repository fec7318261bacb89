import Synchronization
import VendConfig
import VendingCore

/// A coin acceptor in memory, driven by `vendctl sim coin`. It keeps the device's rules: only
/// enabled channels take coins, and an inhibited acceptor returns every coin.
public final class SimulatedCoinAcceptor: CoinAcceptor {
    public static let source = "simulated-acceptor"

    private struct State {
        var accepting = false
        var running = false
        var sequence: UInt64 = 0
    }

    public let events: AsyncStream<CoinAcceptorEvent>
    private let continuation: AsyncStream<CoinAcceptorEvent>.Continuation
    private let channels: [CoinChannel]
    private let state = Mutex(State())

    public init(channels: [CoinChannel]) {
        self.channels = channels
        (events, continuation) = AsyncStream.makeStream(of: CoinAcceptorEvent.self, bufferingPolicy: .unbounded)
    }

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?) async {
        let resumeAt = lastSequence(Self.source) ?? 0
        state.withLock { state in
            state.sequence = resumeAt
            state.running = true
        }
        continuation.yield(.notice("simulated coin acceptor ready (channels \(channels.map { "\($0.channel)" }.joined(separator: ", ")))", isFault: false))
    }

    public func setAcceptance(_ enabled: Bool) async {
        state.withLock { $0.accepting = enabled }
    }

    public func stop() async {
        state.withLock { state in
            state.accepting = false
            state.running = false
        }
    }

    /// What happened to a coin put into the simulated acceptor.
    public enum InsertResult: Sendable, Equatable {
        case accepted(AcceptedCoin)
        case returned(reason: String)
    }

    /// A coin of `value` is put in: accepted on its enabled channel, or returned.
    public func insert(_ value: Money) -> InsertResult {
        guard !channels.isEmpty else { return .returned(reason: "the configuration has no coin acceptor") }
        guard let channel = channels.first(where: { $0.value == value && $0.enabled }) else {
            let known = channels.filter(\.enabled).map { $0.value.decimalString }.joined(separator: ", ")
            return .returned(reason: "no enabled channel takes \(value.decimalString) (enabled: \(known))")
        }
        let result: InsertResult = state.withLock { state in
            guard state.running else { return .returned(reason: "the acceptor is not running") }
            guard state.accepting else { return .returned(reason: "coin acceptance is inhibited") }
            state.sequence += 1
            let coin = AcceptedCoin(channel: channel.channel, value: value,
                                    event: CoinEventID(source: Self.source, sequence: state.sequence))
            return .accepted(coin)
        }
        if case .accepted(let coin) = result { continuation.yield(.accepted(coin)) }
        return result
    }
}
