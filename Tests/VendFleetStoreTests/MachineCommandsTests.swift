import Foundation
import Logging
import Testing
import VendFleetIngest
import VendMQTT
import VenddTestSupport

/// The store's sender of machine commands on a real Mosquitto, with machines that answer, answer
/// late, answer on another machine's topic, or not at all.
@Suite("Commands to machines", .serialized, .timeLimit(.minutes(2)))
struct MachineCommandsTests {
    static let ok = #"{"v":1,"ok":true,"message":"done"}"#

    @Test func answersAreMatchedByCorrelationAndTopicWithinOneBoundedWait() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let broker = try MosquittoRig(in: directory.path)
        try broker.start()
        defer { broker.stop() }
        let commands = try MachineCommands.onLoopback(port: broker.port, clientID: "store")
        defer { commands.stop() }
        let early = commands.send("price", payload: [], to: "m1", within: .seconds(5))
        #expect(early == .notSent("vendstore is not connected to the broker (mqtt://127.0.0.1:\(broker.port)): nothing was sent"))
        try commands.start()
        try waitUntil("the commands connect") { commands.isConnected }
        for (machine, name) in [("m1/#", "price"), ("+", "price"), ("", "price"), ("m1", "cmd/price")] {
            guard case .notSent(let reason) = commands.send(name, payload: [], to: machine, within: .seconds(5)) else {
                Issue.record("\(machine) \(name) was sent")
                continue
            }
            #expect(reason.contains("cannot be a topic level"), "\(reason)")
        }

        let m1 = try AnsweringMachine("m1", port: broker.port) { "\(Self.ok) \($0)" }
        // m2's command is answered with its correlation, but on m3's reply topic: not m2's answer.
        let m2 = try AnsweringMachine("m2", port: broker.port, replyTopic: "vendd/m3/reply/store-commands") { _ in Self.ok }
        let m4 = try AnsweringMachine("m4", port: broker.port, delay: .milliseconds(1500)) { _ in Self.ok }
        let started = Date()
        let replies = commands.send(
            [
                MachineCommand(machine: "m1", name: "price", payload: Array("first".utf8)),
                MachineCommand(machine: "m2", name: "price", payload: []),
                MachineCommand(machine: "m4", name: "price", payload: []),
                MachineCommand(machine: "m1", name: "price", payload: Array("second".utf8)),
            ], within: .milliseconds(800))
        let waited = Date().timeIntervalSince(started)
        #expect(replies == [.answered(Array("\(Self.ok) first".utf8)), .noAnswer, .noAnswer, .answered(Array("\(Self.ok) second".utf8))])
        #expect(waited >= 0.75 && waited < 3, "one deadline for all, not one each: \(waited) s")
        #expect(m2.received.count == 1 && m4.received.count == 1)
        // m4's late answer comes during the next wait: it is not taken for the next one's.
        let next = commands.send("price", payload: Array("third".utf8), to: "m1", within: .seconds(5))
        #expect(next == .answered(Array("\(Self.ok) third".utf8)))
        usleep(1_000_000)
        #expect(commands.send("price", payload: Array("fourth".utf8), to: "m1", within: .seconds(5)) == .answered(Array("\(Self.ok) fourth".utf8)))
        #expect(m1.received == ["first", "second", "third", "fourth"])
    }
}

extension MachineCommands {
    /// The store's command connection to a test broker on loopback (no TLS, no credentials),
    /// not started.
    static func onLoopback(port: Int, clientID: String) throws -> MachineCommands {
        try MachineCommands(
            settings: IngestSettings(
                endpoint: MQTTEndpoint(host: "127.0.0.1", port: port, tls: false), caFile: nil, credentials: nil, clientID: clientID,
                topicPrefix: "vendd", sharedGroup: nil, sessionExpirySeconds: 0, batchSize: 1, batchWindow: .zero, ackInterval: .zero,
                bufferCapacity: 1),
            logger: Logger(label: "commands-test") { _ in SwiftLogNoOpLogHandler() })
    }
}

/// A broker on loopback and the office's command sender connected to it: what every office test
/// that sends to machines starts from.
final class CommandsOnBroker {
    let directory: TemporaryDirectory
    let broker: MosquittoRig
    let commands: MachineCommands

    init() throws {
        directory = try TemporaryDirectory()
        broker = try MosquittoRig(in: directory.path)
        let (directory, broker) = (directory, broker)
        do {
            try broker.start()
            commands = try MachineCommands.onLoopback(port: broker.port, clientID: "office-test")
        } catch {
            broker.stop()
            directory.remove()
            throw error
        }
        do {
            try commands.start()
            try waitUntil("the office's commands connect") { commands.isConnected }
        } catch {
            stop()
            throw error
        }
    }

    func stop() {
        commands.stop()
        broker.stop()
        directory.remove()
    }
}
