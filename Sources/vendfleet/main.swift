import ArgumentParser
import Dispatch
import FoundationEssentials
import Synchronization
import VendConfig
import VendMQTT
import VendTelemetry
import VendText

#if canImport(Glibc)
    import Glibc
#endif

/// `vendfleet`: subscribes to the broker and prints every machine it hears of.
@main
struct VendFleet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendfleet",
        abstract: "Show the vending machines reporting to an MQTT broker: state, last seen, credit, stock alerts, cash, faults.")

    @Option(help: ArgumentHelp("The broker: mqtts://host:8883 (or mqtt://host:1883).", valueName: "url")) var broker: String
    @Option(help: ArgumentHelp("The CA that signed the broker's certificate.", valueName: "file")) var caFile: String?
    @Option(help: ArgumentHelp("A file with one line username:password, mode 0600.", valueName: "file")) var credentialsFile: String?
    @Option(help: "The machines' topic prefix.") var topicPrefix = "vendd"
    @Option(
        help: ArgumentHelp(
            "Listen this long, print the fleet once and exit; without it, print on every change until interrupted.",
            valueName: "seconds")) var listenSeconds: Double?

    func run() throws {
        guard let endpoint = MQTTSettings.Broker(url: broker) else {
            throw ValidationError("'\(broker)' is not a broker URL; write mqtts://host:8883")
        }
        let topics = FleetTopics(prefix: topicPrefix)
        let view = Mutex(FleetView(topics: topics))
        let problems = Mutex<String?>(nil)
        let once = listenSeconds != nil
        let connection = Mutex<MQTTClient?>(nil)
        let client = try MQTTClient(clientID: "vendfleet-\(getpid())", cleanStart: true) { event in
            switch event {
            case .connected(nil):
                problems.withLock { $0 = nil }
                // A clean session each time: subscribe again after every (re)connection.
                do {
                    try connection.withLock { $0 }?.subscribe("\(topics.prefix)/#")
                } catch {
                    problems.withLock { $0 = "\(error)" }
                }
            case .connected(let refusal?):
                problems.withLock { $0 = "the broker refused the connection: \(refusal)" }
            case .message(let message):
                let changed = view.withLock { $0.take(topic: message.topic, payload: message.payload) }
                if changed, !once { print(Self.render(view.withLock { $0 }) + "\n") }
            case .log(let text, true):
                problems.withLock { $0 = text }
            default:
                break
            }
        }
        if let credentialsFile {
            let (username, password) = try MQTTCredentials.read(credentialsFile)
            try client.setCredentials(username: username, password: password)
        }
        if endpoint.tls {
            guard let caFile else { throw ValidationError("mqtts needs --ca-file") }
            try client.setTLS(caFile: caFile)
        }
        connection.withLock { $0 = client }
        try client.start(MQTTEndpoint(host: endpoint.host, port: endpoint.port, tls: endpoint.tls))
        if let listenSeconds {
            usleep(UInt32(max(0, listenSeconds) * 1_000_000))
            client.stop()
            if let problem = problems.withLock({ $0 }), view.withLock({ $0.machines.isEmpty }) {
                throw ValidationError("\(broker): \(problem)")
            }
            print(Self.render(view.withLock { $0 }))
        } else {
            dispatchMain()
        }
    }

    static var now: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    static func render(_ view: FleetView) -> String {
        let now = now
        var table = TextTable([.left, .left, .right, .right, .right, .left, .left])
        table.add(["machine", "state", "last seen", "credit", "coins in", "stock alerts", "faults"])
        for machine in view.machines.values.sorted(by: { $0.id < $1.id }) {
            let state = machine.state
            var fault = state?.state == "out-of-order" ? (state?.reason ?? "out of order") : (machine.lastFault ?? "")
            if machine.cash?.exactChangeOnly == true { fault += (fault.isEmpty ? "" : "; ") + "exact change only" }
            let alerts = machine.stockAlerts(now: now)
            table.add([
                machine.id, state?.state ?? "?", machine.lastSeen == 0 ? "-" : "\(max(0, (now - machine.lastSeen) / 1000)) s ago",
                state?.credit.map { "\($0) \(state?.currency ?? "")" } ?? "-",
                machine.cash.map { "\($0.coinsIn) \($0.currency)" } ?? "-",
                alerts.isEmpty ? "-" : alerts.joined(separator: ", "), fault.isEmpty ? "-" : fault,
            ])
        }
        return table.render().joined(separator: "\n")
    }
}
