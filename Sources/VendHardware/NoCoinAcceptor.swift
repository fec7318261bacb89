/// A machine without a coin acceptor (no `coin_acceptor:` section): nothing to start, no coins.
public struct NoCoinAcceptor: CoinAcceptor {
    public let events: AsyncStream<CoinAcceptorEvent>

    public init() {
        events = AsyncStream { _ in }
    }

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?) async {}
    public func setAcceptance(_ enabled: Bool) async {}
    public func stop() async {}
}
