import Logging
import VendConfig
import VendFleetIngest
import VendFleetStore
import VendHTTP

/// The back office as vendstore serves it: the HTTP server on the configured address with an
/// `Office` on a database connection of its own, sending machine commands through `commands`.
public final class OfficeService: Sendable {
    private let server: HTTPServer
    private let feed: LiveFeed
    public var port: Int { server.port }

    /// Opens `open()`'s connection and listens. Beyond loopback on plain HTTP (which the file
    /// must have allowed) it says so loudly in the log.
    public init(
        settings: OfficeSettings, logger: Logger, throttleLimits: (perUser: Int, perAddress: Int)? = nil, commands: MachineCommands? = nil,
        commandTimeout: Duration = .seconds(5), clock: @escaping @Sendable () -> Int64, open: () throws -> FleetSQL
    ) throws {
        let office = try Office(
            sql: try open(), settings: settings, logger: logger, throttleLimits: throttleLimits, commands: commands, commandTimeout: commandTimeout,
            clock: clock)
        var limits = HTTPServer.Limits()
        limits.headers = OfficeRequest.headers
        limits.arguments = OfficeRequest.arguments
        // The live pages' streams.
        limits.streams = LiveFeed.maxStreams
        // A thread per request: a price change waits up to `commandTimeout` for the machines
        // (holding no lock), and the other pages are served meanwhile.
        server = try HTTPServer(address: settings.address, port: settings.port, limits: limits, dispatch: .threadPerRequest) {
            office.handle($0)
        }
        feed = office.feed
        let shown = settings.address.contains(":") ? "[\(settings.address)]:\(port)" : "\(settings.address):\(port)"
        if !settings.isLoopback {
            logger.critical(
                "office: listening on \(shown) in PLAIN HTTP beyond loopback (plain_http_beyond_loopback: true): passwords and session cookies cross that network in clear; put a TLS reverse proxy in front (docs/office.md)"
            )
        } else {
            logger.info("office: listening on \(shown)\(settings.tlsProxy ? " behind a TLS proxy" : "")")
        }
    }

    /// The store committed events or retained messages of `machines`: the live pages update.
    public func changed(_ machines: Set<String>) { feed.changed(machines) }

    /// The live pages' streams open now.
    public var liveStreams: Int { server.streams }

    public func stop() { server.stop() }
}
