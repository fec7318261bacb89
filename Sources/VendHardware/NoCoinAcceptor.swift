/// A machine without a coin acceptor (no `coin_acceptor:` section): nothing to start, no coins.
public struct NoCoinAcceptor: CoinAcceptor {
    public init() {}

    public func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler) {}
    public func setAcceptance(_ enabled: Bool) {}
    public func stop() async {}
}
