import VendSerial
import VendSettings
import VendTime

/// Builds the coin acceptor a configuration describes, talking to real hardware (or to a Unix
/// socket standing in for it).
public enum CoinAcceptorFactory {
    public static func make(_ config: CoinAcceptorConfig, timekeeper: any Timekeeper) -> any CoinAcceptor {
        let port = PortAddress(config.port, baudRate: config.baudRate)
        // The parser gives ccTalk settings exactly when the protocol is ccTalk.
        if config.protocol == .cctalk, let settings = config.cctalk {
            let driver = CcTalkDriver(port: port, settings: settings, channels: config.channels)
            return ThreadedCoinAcceptor(name: "vendd-cctalk", timekeeper: timekeeper, body: driver.run)
        } else {
            let driver = ByteCodeDriver(port: port, channels: config.channels)
            return ThreadedCoinAcceptor(name: "vendd-bytecode", timekeeper: timekeeper, body: driver.run)
        }
    }

    /// What the description of the hardware says about the acceptor.
    public static func describe(_ config: CoinAcceptorConfig) -> String {
        "\(config.protocol.rawValue) on \(PortAddress(config.port, baudRate: config.baudRate)) (\(config.channels.count) channels)"
    }
}
