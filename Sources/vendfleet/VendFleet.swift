import ArgumentParser
import FoundationEssentials
import Synchronization
import VendConfig
import VendMQTT
import VendPOSIX
import VendReports
import VendTelemetry
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// `vendfleet`: subscribes to the broker and prints every machine it hears of.
@main
struct VendFleet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendfleet",
        abstract: "Show the vending machines reporting to an MQTT broker: state, last seen, credit, sales, stock alerts, faults.",
        discussion:
            "Exit status: 0 shown, 64 wrong argument, 69 the broker cannot be reached or refuses the connection (nothing is shown then), 1 anything else."
    )

    @Option(help: ArgumentHelp("The broker: mqtts://host:8883 (or mqtt://host:1883).", valueName: "url")) var broker: String
    @Option(help: ArgumentHelp("The CA that signed the broker's certificate.", valueName: "file")) var caFile: String?
    @Option(help: ArgumentHelp("A file with one line username:password, mode 0600.", valueName: "file")) var credentialsFile: String?
    @Option(help: "The machines' topic prefix.") var topicPrefix = "vendd"
    @Option(
        help: ArgumentHelp(
            "Listen this long, print the fleet once and exit; without it, show the fleet and redraw it as it changes until interrupted.",
            valueName: "seconds")) var listenSeconds: Double?
    @Option(help: ArgumentHelp("Give up (exit 69) when the broker has not accepted the connection within this long.", valueName: "seconds"))
    var connectSeconds: Double = 10
    @Option(help: ArgumentHelp("Without --listen-seconds: redraw at most this often, and only when something changed.", valueName: "seconds"))
    var refreshSeconds: Double = 2
    @Option(
        help: ArgumentHelp(
            "How amounts are shown, as machine.currency.format in vendd's file (e.g. '{amount}원', '€{amount}'); default: grouped digits and the currency code.",
            valueName: "template")) var moneyFormat: String?

    func validate() throws {
        guard connectSeconds > 0 else { throw ValidationError("--connect-seconds must be more than 0") }
        guard refreshSeconds > 0 else { throw ValidationError("--refresh-seconds must be more than 0") }
        if let listenSeconds, listenSeconds <= 0 { throw ValidationError("--listen-seconds must be more than 0") }
        if let moneyFormat, MoneyFormat(template: moneyFormat) == nil {
            throw ValidationError("--money-format '\(moneyFormat)' must contain {amount} exactly once, e.g. '{amount}원' or '€{amount}'")
        }
    }

    func run() throws {
        guard let endpoint = MQTTSettings.Broker(url: broker) else {
            throw ValidationError("'\(broker)' is not a broker URL; write mqtts://host:8883")
        }
        if endpoint.tls, caFile == nil { throw ValidationError("mqtts needs --ca-file") }
        // Before libmosquitto's thread starts, so that it inherits the block and never takes them.
        let interrupts = Interrupts()
        let topics = FleetTopics(prefix: topicPrefix)
        let link = Mutex(FleetLink(view: FleetView(topics: topics)))
        let connection = Mutex<MQTTClient?>(nil)
        let client = try MQTTClient(clientID: "vendfleet-\(getpid())", cleanStart: true) { event in
            switch event {
            case .connected(nil):
                link.withLock { $0.connected() }
                // A clean session each time: subscribe again after every (re)connection.
                do {
                    try connection.withLock { $0 }?.subscribe("\(topics.prefix)/#")
                } catch {
                    link.withLock { $0.problem = "subscribing to \(topics.prefix)/# failed: \(error)" }
                }
            case .connected(let refusal?):
                link.withLock { $0.refused = refusal }
            case .disconnected(let reason):
                link.withLock { $0.disconnected(reason) }
            case .message(let message):
                link.withLock { _ = $0.view.take(topic: message.topic, payload: message.payload) }
            case .log(let text, true):
                link.withLock { $0.problem = text }
            default:
                break
            }
        }
        if let credentialsFile {
            let (username, password) = try MQTTCredentials.read(credentialsFile)
            try client.setCredentials(username: username, password: password)
        }
        connection.withLock { $0 = client }
        do {
            if endpoint.tls, let caFile { try client.setTLS(caFile: caFile) }
            try client.start(MQTTEndpoint(host: endpoint.host, port: endpoint.port, tls: endpoint.tls))
        } catch {
            throw Failure(
                "cannot connect to the broker at \(broker): \(error): check the URL\(endpoint.tls ? " and --ca-file (a PEM file)" : ""); nothing is shown"
            )
        }
        defer { client.stop() }

        let table = FleetTable(moneyFormat: moneyFormat)
        // Nothing is shown before the broker took the connection: an empty table would read as
        // "no machines".
        let deadline = Self.now + Int64(connectSeconds * 1000)
        while link.withLock({ $0.everConnected == false && $0.refused == nil }), Self.now < deadline {
            if let signal = interrupts.wait(seconds: 0.02) { Glibc.exit(128 + signal) }
        }
        try link.withLock { state in
            if let refusal = state.refused {
                throw Failure(
                    "the broker at \(broker) refused the connection (\(refusal)): check --credentials-file and the broker's password file and ACL")
            }
            if !state.everConnected {
                let why = state.problem.map { " (\($0))" } ?? ""
                throw Failure(
                    "cannot reach the broker at \(broker) within \(Self.seconds(connectSeconds))\(why): check the host and port, that the broker runs and listens there, the firewall\(endpoint.tls ? ", and that --ca-file signed its certificate" : ""); nothing is shown"
                )
            }
        }
        if let listenSeconds {
            if let signal = interrupts.wait(seconds: listenSeconds) { Glibc.exit(128 + signal) }
            let (view, status) = link.withLock { ($0.view, $0.statusLine) }
            print(table.render(view, now: Self.now, connection: status))
            return
        }
        // Live: redraw in place on a terminal, at most every refresh, only when something changed.
        let terminal = isatty(1) == 1
        var shown: (view: FleetView, connection: String?)?
        while true {
            let (view, status) = link.withLock { ($0.view, $0.statusLine) }
            if shown?.view != view || shown?.connection != status {
                let text = table.render(view, now: Self.now, connection: status)
                // Past print's buffer: a pipe (`vendfleet | tee`) sees each table as it is drawn.
                StandardOutput.write(terminal ? "\u{1B}[H\u{1B}[J" + text + "\n" : text + "\n\n")
                shown = (view, status)
            }
            // Interrupted (Ctrl-C, SIGTERM): the end of watching, not a failure.
            if interrupts.wait(seconds: refreshSeconds) != nil { return }
        }
    }

    static var now: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// SIGINT and SIGTERM, blocked in every thread from the start and taken with sigtimedwait(2) on
/// the main thread while it waits: a thread of libmosquitto's would otherwise be handed them.
struct Interrupts {
    private var set = sigset_t()

    init() {
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits up to `seconds`: the signal that came, or nil when the time ran out.
    func wait(seconds: Double) -> Int32? {
        var set = set
        var timeout = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1_000_000_000))
        let number = sigtimedwait(&set, nil, &timeout)
        return number > 0 ? number : nil
    }
}

/// What the broker connection did, and the fleet as heard.
struct FleetLink {
    var view: FleetView
    var everConnected = false
    var isConnected = false
    /// The broker's CONNACK refusal (bad credentials, not authorised).
    var refused: String?
    /// The last error libmosquitto reported, or why the connection went.
    var problem: String?
    var lostAt: Int64?

    mutating func connected() {
        everConnected = true
        isConnected = true
        refused = nil
        problem = nil
        lostAt = nil
    }

    mutating func disconnected(_ reason: String) {
        if isConnected { lostAt = VendFleet.now }
        isConnected = false
        problem = reason
    }

    /// Live mode's line above the table while the broker is away.
    var statusLine: String? {
        guard everConnected, !isConnected else { return nil }
        return
            "broker connection lost\(lostAt.map { " at \(DateText.format($0, seconds: true))" } ?? "")\(problem.map { " (\($0))" } ?? ""): reconnecting; the table is as last heard"
    }
}

/// "vendfleet: message" on stderr and exit 69.
struct Failure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

extension VendFleet {
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as Failure {
            StandardError.write("vendfleet: \(failure.description)\n")
            Glibc.exit(69)
        } catch {
            exit(withError: error)
        }
    }
}
