import Synchronization
import VendSettings
import VendingCore

/// A coin acceptor in memory, driven by `vendctl sim coin`. It keeps the device's rules: only
/// enabled channels take coins, and an inhibited acceptor returns every coin.
public final class SimulatedCoinAcceptor: CoinAcceptor {
    public static let source = "simulated-acceptor"

    private struct State {
        var accepting = false
        var running = false
        var sequence: UInt64 = 0
        var report: DeviceReportHandler?
    }

    private let channels: [CoinChannel]
    private let state = Mutex(State())
    /// Held while a coin is numbered and delivered, so coins are credited in their own order;
    /// apart from `state`, because delivering changes the acceptance.
    private let delivering = Mutex(())

    public init(channels: [CoinChannel]) {
        self.channels = channels
    }

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler) {
        let resumeAt = lastSequence(Self.source) ?? 0
        state.withLock { state in
            state.sequence = resumeAt
            state.running = true
            state.report = report
        }
        // A machine without a coin acceptor (coins on the MDB changer) hears nothing of this one.
        guard !channels.isEmpty else { return }
        report(.cash(.notice("simulated coin acceptor ready (channels \(channels.map { "\($0.channel)" }.joined(separator: ", ")))", isFault: false)))
    }

    public func setAcceptance(_ enabled: Bool) {
        state.withLock { $0.accepting = enabled }
    }

    /// Whether the acceptor takes coins now.
    public var isAccepting: Bool { state.withLock { $0.accepting } }

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

    /// A coin of `value` is put in: accepted on its enabled channel, or returned. An accepted coin
    /// has been delivered (and so credited) when this returns.
    public func insert(_ value: Money) -> InsertResult {
        guard !channels.isEmpty else { return .returned(reason: "the configuration has no coin acceptor") }
        guard let channel = channels.first(where: { $0.value == value && $0.enabled }) else {
            let known = channels.filter(\.enabled).map { $0.value.decimalString }.joined(separator: ", ")
            return .returned(reason: "no enabled channel takes \(value.decimalString) (enabled: \(known))")
        }
        return delivering.withLock { _ in numberAndDeliver(value, on: channel) }
    }

    private func numberAndDeliver(_ value: Money, on channel: CoinChannel) -> InsertResult {
        let (result, report): (InsertResult, DeviceReportHandler?) = state.withLock { state in
            guard state.running else { return (.returned(reason: "the acceptor is not running"), nil) }
            guard state.accepting else { return (.returned(reason: "coin acceptance is inhibited"), nil) }
            state.sequence += 1
            let coin = AcceptedCoin(
                channel: channel.channel, value: value,
                event: CoinEventID(source: Self.source, sequence: state.sequence))
            return (.accepted(coin), state.report)
        }
        if case .accepted(let coin) = result { report?(.cash(.accepted(coin))) }
        return result
    }
}
