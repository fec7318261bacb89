import VendingCore

public enum CoinProtocol: String, Sendable, CaseIterable {
    case cctalk
    /// Each received byte is a channel number (cheap acceptors with a serial output).
    case bytecode
}

public enum CcTalkChecksum: String, Sendable, CaseIterable {
    case simple8 = "simple-8"
    case crc16 = "crc-16"
}

public struct CcTalkSettings: Sendable {
    public let address: Int
    public let hostAddress: Int
    public let checksum: CcTalkChecksum
    /// The interface returns our own bytes (single-wire or RS-485 buses do).
    public let echo: Bool
    public let pollInterval: Duration

    public init(address: Int, hostAddress: Int, checksum: CcTalkChecksum, echo: Bool, pollInterval: Duration) {
        self.address = address
        self.hostAddress = hostAddress
        self.checksum = checksum
        self.echo = echo
        self.pollInterval = pollInterval
    }
}

public struct CoinChannel: Sendable {
    public let channel: Int
    public let value: Money
    public let enabled: Bool
    public let origin: ConfigOrigin

    public init(channel: Int, value: Money, enabled: Bool, origin: ConfigOrigin) {
        self.channel = channel
        self.value = value
        self.enabled = enabled
        self.origin = origin
    }
}

public struct CoinAcceptorConfig: Sendable {
    /// A device path (`/dev/ttyUSB0`, `/dev/serial/by-id/…`) or `unix:/path/to/socket`.
    public let port: String
    public let baudRate: Int
    public let `protocol`: CoinProtocol
    /// Present exactly when the protocol is ccTalk.
    public let cctalk: CcTalkSettings?
    public let channels: [CoinChannel]

    public init(port: String, baudRate: Int, protocol: CoinProtocol, cctalk: CcTalkSettings?, channels: [CoinChannel]) {
        self.port = port
        self.baudRate = baudRate
        self.protocol = `protocol`
        self.cctalk = cctalk
        self.channels = channels
    }

    public func channel(_ number: Int) -> CoinChannel? { channels.first { $0.channel == number } }
}
