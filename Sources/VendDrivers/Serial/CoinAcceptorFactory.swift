import VendHardware
import VendSerial
import VendSettings
import VendTime

/// Builds the coin acceptor a configuration describes, talking to real hardware (or to a Unix
/// socket standing in for it).
public enum CoinAcceptorFactory {
    /// `link`: the ccTalk bus when hoppers share it (see `ccTalkLink`); the driver owns it.
    public static func make(_ config: CoinAcceptorConfig, link: CcTalkLink? = nil, timekeeper: any Timekeeper) -> any CoinAcceptor {
        let port = PortAddress(config.port, baudRate: config.baudRate)
        // The parser gives ccTalk settings exactly when the protocol is ccTalk.
        if config.protocol == .cctalk, let settings = config.cctalk {
            let driver = CcTalkDriver(
                link: link ?? CcTalkLink(port: config.port, baudRate: config.baudRate, echo: settings.echo), settings: settings,
                channels: config.channels)
            return ThreadedCoinAcceptor(name: "vendd-cctalk", timekeeper: timekeeper, body: driver.run)
        } else {
            let driver = ByteCodeDriver(port: port, channels: config.channels)
            return ThreadedCoinAcceptor(name: "vendd-bytecode", timekeeper: timekeeper, body: driver.run)
        }
    }

    /// The acceptor's ccTalk bus as a link others can share; nil unless it speaks ccTalk.
    public static func ccTalkLink(_ config: CoinAcceptorConfig) -> CcTalkLink? {
        guard config.protocol == .cctalk, let settings = config.cctalk else { return nil }
        return CcTalkLink(port: config.port, baudRate: config.baudRate, echo: settings.echo)
    }

    /// What the description of the hardware says about the acceptor.
    public static func describe(_ config: CoinAcceptorConfig) -> String {
        "\(config.protocol.rawValue) on \(PortAddress(config.port, baudRate: config.baudRate)) (\(config.channels.count) channels)"
    }
}
