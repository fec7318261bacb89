import VendingCore

public enum PayoutDeviceKind: String, Sendable, CaseIterable {
    /// A ccTalk hopper (one coin value per hopper), on the coin acceptor's bus or its own port.
    case cctalkHopper = "cctalk-hopper"
}

/// One device that pays coins back, as configured under `payout_devices`.
public struct PayoutDeviceConfig: Sendable {
    public let kind: PayoutDeviceKind
    /// The value of the coins it holds.
    public let coin: Money
    /// Its ccTalk address (3 is a hopper's factory address).
    public let address: Int
    /// Its own port; nil shares the coin acceptor's ccTalk bus.
    public let port: String?
    public let origin: ConfigOrigin

    public init(kind: PayoutDeviceKind, coin: Money, address: Int, port: String?, origin: ConfigOrigin) {
        self.kind = kind
        self.coin = coin
        self.address = address
        self.port = port
        self.origin = origin
    }

    /// The port it is reached on, given the coin acceptor's.
    public func port(sharing acceptor: CoinAcceptorConfig?) -> String? { port ?? acceptor?.port }
}
