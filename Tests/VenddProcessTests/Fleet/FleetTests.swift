import Foundation
import Testing
import VendControl
import VendTelemetry
import VenddTestSupport

/// vendd against a real Mosquitto broker (TLS, passwords, the documented ACL): telemetry that
/// survives broker restarts and vendd crashes, and remote commands only as allowed.
@Suite(.oneRealProcessTestAtATime) struct FleetTests {
    @Test func brokerRestartedTwiceMidStreamLosesNoEvent() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let subscriber = try rig.subscribe(events: "m1")
        let daemon = try rig.machine("m1")
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        var coins = 0
        var sales = 0
        for phase in 0..<3 {
            for _ in 0..<15 {
                try daemon.send(.sim(.coin(amount: "100")))
                coins += 1
            }
            if phase < 2 {
                // Mid-stream: the broker goes away while coins and a sale go on, then comes back.
                rig.broker.stop()
                for _ in 0..<5 {
                    try daemon.send(.sim(.coin(amount: "500")))
                    coins += 1
                }
                try daemon.send(.select(slot: "B2"))
                sales += 1
                _ = try daemon.waitUntil("sale \(sales)") { $0.books.itemsSold == sales && $0.vendInProgress == nil }
                #expect(try daemon.status().fleetOutbox?.pending ?? 0 > 0, "events wait in the outbox while the broker is down")
                try rig.broker.start()
            }
        }
        try rig.waitUntilSent(daemon, timeout: 30)
        let events = try rig.waitForEvents(subscriber, "every coin and both sales") { events in
            events.filter { $0.type == .coinCredited }.count == coins && events.filter { $0.type == .vendEnded }.count == sales
        }
        #expect(events.filter { $0.type == .coinCredited }.count == coins)
        #expect(events.filter { $0.type == .vendStarted }.count == sales)
        #expect(events.filter { $0.type == .stockChanged && $0.reason == "sold" }.count == sales)
        #expect(events.filter { $0.type == .vendEnded }.allSatisfy { $0.outcome == "sold" && $0.machine == "m1" })
        let coinTotal = events.filter { $0.type == .coinCredited }.compactMap { $0.amount.flatMap(Int.init) }.reduce(0, +)
        #expect(coinTotal == 15 * 3 * 100 + 10 * 500)
        #expect(try daemon.stop() == 0)
        print(
            "fleet: \(coins) coins and \(sales) sales across 2 broker restarts; \(subscriber.lines.count) deliveries of \(events.count) distinct events"
        )
    }

    /// libmosquitto's own network loop ends for good on a TLS error (`mosquitto_loop_forever`
    /// returns on EPROTO and MOSQ_ERR_TLS), as when a broker dies mid-handshake or something other
    /// than the broker answers on its port: the machine stayed offline until vendd restarted.
    @Test func aTLSFailureIsRetriedUntilTheBrokerAnswers() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        let impostor = try NotABroker(port: rig.broker.port, in: rig.directory.path)
        let daemon = try rig.machine("m1")
        try daemon.start()
        try daemon.waitForLog("OpenSSL Error")
        try daemon.send(.restock(slot: "all", count: nil))
        impostor.stop()
        try rig.broker.start()
        let status = try rig.waitUntilSent(daemon, timeout: 20)
        #expect(status.fleetOutbox?.lastSeq ?? 0 > 0, "the restock's events were sent")
        #expect(try daemon.stop() == 0)
    }

    @Test func eventsInTheOutboxOfAKilledVenddAreDeliveredAfterRestart() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let subscriber = try rig.subscribe(events: "m1")
        rig.broker.stop()
        let daemon = try rig.machine("m1")
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        let restocked = try #require(try daemon.status().fleetOutbox?.pending)
        for _ in 0..<12 { try daemon.send(.sim(.coin(amount: "100"))) }
        let pending = restocked + 24
        #expect(try daemon.status().fleetOutbox?.pending == pending, "12 coins: a credit and a credit change each")
        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()
        // Restarted with the broker still down: the start-up compaction moves the unpublished
        // events from the journal into outbox.json. Killed again, then the broker comes back.
        try daemon.start()
        #expect(try daemon.status().fleetOutbox?.pending == pending)
        #expect(FileManager.default.fileExists(atPath: daemon.stateDirectory + "/outbox.json"))
        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()
        try rig.broker.start()
        try daemon.start()
        let events = try rig.waitForEvents(subscriber, "the restock and the 12 coins") { $0.count == pending }
        #expect(events.filter { $0.type == .coinCredited }.count == 12)
        #expect(events.filter { $0.type == .stockChanged && $0.reason == "restocked" }.count == restocked)
        #expect(events.filter { $0.type == .creditChanged }.count == 12)
        #expect(Set(events.filter { $0.type == .creditChanged }.compactMap(\.credit)) == Set((1...12).map { "\($0 * 100)" }))
        _ = try daemon.waitUntil("the outbox empty", timeout: 20) { $0.fleetOutbox?.pending == 0 }
        #expect(try daemon.stop() == 0)
    }

    @Test func aWrongCARefusesTheBrokerWithAClearLogAndTheMachineSellsOn() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let daemon = try rig.machine("m1", caFile: rig.broker.directory + "/other-ca.pem")
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        let restocked = try #require(try daemon.status().fleetOutbox?.pending)
        try daemon.send(.sim(.coin(amount: "500")))
        let deadline = Date().addingTimeInterval(10)
        while !daemon.log.contains("certificate is not signed by the CA in"), Date() < deadline { usleep(50_000) }
        #expect(
            daemon.log.contains("the broker's certificate is not signed by the CA in \(rig.broker.directory)/other-ca.pem"),
            "log:\n\(daemon.log)")
        let status = try daemon.status()
        #expect(status.credit == "500")
        #expect(status.fleetOutbox?.connected == false)
        #expect(status.fleetOutbox?.pending == restocked + 2, "nothing acknowledged, nothing lost")
        #expect(try daemon.stop() == 0)
    }

    @Test func commandsAreTakenOnlyWhenAllowedAndOnlyFromTheOperator() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let daemon = try rig.machine("m1", commands: ["price", "report", "dex"])
        try daemon.start()
        _ = try daemon.waitUntil("connected") { $0.fleetOutbox?.connected == true }
        let replies = try FleetSubscriber(
            broker: rig.broker, topic: "vendd/m1/reply/#", clientID: "operator-replies", user: MosquittoBroker.operatorUser)
        defer { replies.stop() }

        // Another machine's credentials: the broker's ACL drops the command before vendd sees it.
        try rig.publish(as: "m2", "vendd/m1/cmd/price", #"{"slot":"A1","price":"100","sender":"intruder"}"#)
        // Allowed, from the operator: the price changes and the reply says so.
        try rig.publish(
            as: MosquittoBroker.operatorUser, "vendd/m1/cmd/price", #"{"slot":"A1","price":"1300","sender":"alice"}"#,
            responseTopic: "vendd/m1/reply/alice-1")
        // Not allowed on this machine: refused and logged.
        try rig.publish(
            as: MosquittoBroker.operatorUser, "vendd/m1/cmd/service", #"{"on":true,"sender":"alice"}"#,
            responseTopic: "vendd/m1/reply/alice-2")
        // The DEX audit file itself as the answer.
        try rig.publish(
            as: MosquittoBroker.operatorUser, "vendd/m1/cmd/dex", #"{"commId":"ABC1234567","sender":"alice"}"#,
            responseTopic: "vendd/m1/reply/alice-3")
        let deadline = Date().addingTimeInterval(10)
        func answered(_ reply: String) -> Bool { replies.text.contains("vendd/m1/reply/\(reply) ") }
        while !(answered("alice-1") && answered("alice-2") && replies.text.contains("DXE*")), Date() < deadline { usleep(50_000) }
        let byTopic = Dictionary(replies.lines.map { ($0.topic, $0.payload) }, uniquingKeysWith: { first, _ in first })
        let priced = try #require(byTopic["vendd/m1/reply/alice-1"].map { try JSONDecoder().decode(ControlResponse.self, from: Data($0.utf8)) })
        #expect(priced.ok && priced.message?.contains("1,300원") == true, "\(priced)")
        let refused = try #require(byTopic["vendd/m1/reply/alice-2"].map { try JSONDecoder().decode(ControlResponse.self, from: Data($0.utf8)) })
        #expect(!refused.ok && refused.error?.code == .forbidden, "\(refused)")
        // The file is several CRLF lines: read it from the raw output.
        let dex = try #require(replies.text.components(separatedBy: "vendd/m1/reply/alice-3 ").last)
        #expect(dex.hasPrefix("DXS*ABC1234567") && dex.contains("\r\nG85*") && dex.contains("\r\nDXE*"), "\(dex)")
        let status = try daemon.status()
        #expect(status.slot("A1")?.price == "1300", "only the operator's price counts")
        #expect(status.state == "in-service", "the refused service command changed nothing")
        #expect(daemon.log.contains("MQTT command 'service' from alice (reply to vendd/m1/reply/alice-2): command 'service' is not allowed"))
        #expect(daemon.log.contains("MQTT command 'price' from alice"))
        #expect(!daemon.log.contains("intruder"), "the intruder's command reached vendd")
        #expect(try daemon.stop() == 0)
    }

    @Test func vendfleetShowsThreeMachinesOnOneBroker() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        var daemons: [DaemonHarness] = []
        for (index, machine) in MosquittoBroker.machines.enumerated() {
            let daemon = try rig.machine(machine)
            daemons.append(daemon)
            try daemon.start()
            try daemon.send(.restock(slot: "all", count: nil))
            for _ in 0...index { try daemon.send(.sim(.coin(amount: "500"))) }
            _ = try daemon.waitUntil("\(machine) connected") { $0.fleetOutbox?.connected == true && $0.fleetOutbox?.pending == 0 }
        }
        let m3 = try FleetSubscriber(broker: rig.broker, topic: "vendd/m3/state", clientID: "test-m3-state")
        defer { m3.stop() }
        try daemons[2].send(.service(on: true))
        try m3.waitUntil("m3's retained state in service mode") { $0.last?.payload.contains("service-mode") == true }
        let run = try ProcessRun.run(
            builtProduct("vendfleet"),
            [
                "--broker", rig.broker.url, "--ca-file", rig.broker.caFile,
                "--credentials-file", try rig.broker.credentialsFile(for: MosquittoBroker.fleetUser), "--listen-seconds", "2",
            ])
        #expect(run.status == 0, "\(run.errors)")
        print("vendfleet:\n\(run.output)")
        let lines = run.output.split(separator: "\n").map(String.init)
        for (index, machine) in MosquittoBroker.machines.enumerated() {
            let line = try #require(lines.first { $0.hasPrefix(machine + " ") }, "no line for \(machine) in:\n\(run.output)")
            #expect(line.contains(["500 KRW", "1,000 KRW", "1,500 KRW"][index]), "\(machine)'s credit: \(line)")
        }
        #expect(lines.first { $0.hasPrefix("m3 ") }?.contains("service-mode") == true, "\(run.output)")
        #expect(lines.first { $0.hasPrefix("m1 ") }?.contains("in-service") == true, "\(run.output)")
        for daemon in daemons { #expect(try daemon.stop() == 0) }
    }
}

/// One broker, and machines configured for it.
final class FleetRig: @unchecked Sendable {
    let directory: TemporaryDirectory
    let broker: MosquittoBroker
    private var subscribers: [FleetSubscriber] = []
    private var daemons: [DaemonHarness] = []

    init(acl: String = MosquittoBroker.acl) throws {
        directory = try TemporaryDirectory()
        broker = try MosquittoBroker(in: directory.path, acl: acl)
    }

    /// A simulated vendd whose configuration has an `mqtt:` section for this broker.
    func machine(
        _ id: String, caFile: String? = nil, commands: [String] = [], keepUntilStored: Bool = false,
        config: String = "config/examples/cctalk-coins.yaml", edit: @escaping (String) -> String = { $0 }
    ) throws -> DaemonHarness {
        let credentials = try broker.credentialsFile(for: id)
        let section = """

            mqtt:
              broker: \(broker.url)
              machine_id: \(id)
              credentials_file: \(credentials)
              ca_file: \(caFile ?? broker.caFile)
              commands: [\(commands.joined(separator: ", "))]
              keep_until_stored: \(keepUntilStored)

            """
        let daemon = try DaemonHarness(config: config) { edit($0) + section }
        daemons.append(daemon)
        return daemon
    }

    func subscribe(events machine: String) throws -> FleetSubscriber {
        let subscriber = try FleetSubscriber(broker: broker, topic: "vendd/\(machine)/events/#", clientID: "test-\(machine)-events")
        subscribers.append(subscriber)
        return subscriber
    }

    func publish(as user: String, _ topic: String, _ payload: String, responseTopic: String? = nil, retain: Bool = false) throws {
        var arguments = broker.clientArguments(user) + ["-V", "mqttv5", "-q", "1", "-t", topic, "-m", payload] + (retain ? ["-r"] : [])
        if let responseTopic { arguments += ["-D", "publish", "response-topic", responseTopic] }
        try MosquittoBroker.run("mosquitto_pub", arguments)
    }

    /// Waits until the distinct events received satisfy `done`. Every delivery must decode, and
    /// an id delivered twice must carry the same event both times.
    func waitForEvents(
        _ subscriber: FleetSubscriber, _ what: String, timeout: TimeInterval = 30,
        _ done: ([TelemetryEvent]) -> Bool
    ) throws -> [TelemetryEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var byID: [String: TelemetryEvent] = [:]
            var order: [String] = []
            for line in subscriber.events {
                let event = try JSONDecoder().decode(TelemetryEvent.self, from: Data(line.payload.utf8))
                #expect(line.topic == "vendd/\(event.machine)/events/\(event.type.rawValue)" || line.topic == "vendd/\(event.machine)/backlog")
                if let earlier = byID[event.id] {
                    #expect(earlier == event, "id \(event.id) delivered twice with different contents")
                } else {
                    byID[event.id] = event
                    order.append(event.id)
                }
            }
            let events = order.compactMap { byID[$0] }.sorted { $0.at < $1.at }
            if done(events) { return events }
            guard Date() < deadline else { throw HarnessError("timed out waiting for \(what); \(events.count) events received") }
            usleep(100_000)
        }
    }

    /// Waits until `daemon` is connected with nothing left in its outbox. A timeout says what
    /// vendd's MQTT link logged and what the broker logged.
    @discardableResult
    func waitUntilSent(_ daemon: DaemonHarness, timeout: TimeInterval) throws -> StatusReport {
        do {
            return try daemon.waitUntil("connected, the outbox empty", timeout: timeout) {
                $0.fleetOutbox?.connected == true && $0.fleetOutbox?.pending == 0
            }
        } catch {
            let link = daemon.log.split(separator: "\n").filter { $0.contains("MQTT") }.joined(separator: "\n")
            throw HarnessError("\(error)\nvendd's MQTT log:\n\(link)\nthe broker's log:\n\(broker.log.suffix(4000))")
        }
    }

    func tearDown() {
        for subscriber in subscribers { subscriber.stop() }
        for daemon in daemons { daemon.tearDown() }
        broker.tearDown()
        directory.remove()
    }
}

/// Something other than a broker on the broker's port: it answers every connection with plain
/// text and closes it, so the machine's TLS handshake fails.
final class NotABroker: Sendable {
    private let process: ChildProcess

    init(port: Int, in directory: String) throws {
        let script = """
            import socket
            server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", \(port)))
            server.listen()
            while True:
                connection, _ = server.accept()
                connection.sendall(b"HTTP/1.1 400 Bad Request\\r\\n\\r\\n")
                connection.close()
            """
        let log = directory + "/not-a-broker.log"
        process = try ChildProcess("/usr/bin/python3", ["-c", script], output: log, errors: log)
        guard process.waitUntilListening(on: port) else {
            throw HarnessError("the impostor did not listen on \(port); log:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    func stop() { _ = process.stop(SIGKILL) }
}
