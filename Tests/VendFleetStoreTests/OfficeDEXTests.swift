import Foundation
import Logging
import Synchronization
import Testing
import VendFleetIngest
import VendFleetStore
import VendMQTT
import VenddTestSupport

@testable import VendOffice

/// The office's `dex` requests on a real Mosquitto, the machine's side played by a test client
/// that sees the command and answers as the test says (vendd's own answer is
/// VenddProcessTests' OfficeDEXProcessTests): an answer that never comes, stray answers, a late one.
@Suite("Back office: DEX requests", .serialized, .timeLimit(.minutes(3)))
struct OfficeDEXTests {
    /// The commands a machine receives, with their response topic and correlation data.
    final class CommandInbox: Sendable {
        let client: MQTTClient
        private final class Shared: Sendable {
            let commands = Mutex<[MQTTMessage]>([])
            let subscribed = Atomic<Bool>(false)
            let client = Mutex<MQTTClient?>(nil)
        }
        private let shared: Shared

        init(port: Int, machine: String) throws {
            let shared = Shared()
            self.shared = shared
            client = try MQTTClient(clientID: "machine-\(machine)", cleanStart: true) { event in
                switch event {
                case .connected(nil):
                    try? shared.client.withLock { $0 }?.subscribe("vendd/\(machine)/cmd/#")
                    shared.subscribed.store(true, ordering: .releasing)
                case .message(let message): shared.commands.withLock { $0.append(message) }
                default: break
                }
            }
            shared.client.withLock { $0 = client }
            try client.start(MQTTEndpoint(host: "127.0.0.1", port: port, tls: false))
            try waitUntil("the machine's client connects") { shared.subscribed.load(ordering: .acquiring) }
        }

        var commands: [MQTTMessage] { shared.commands.withLock { $0 } }

        deinit { client.stop() }
    }

    @Test(arguments: Engine.allCases)
    func noAnswerIsSaidAfterTheTimeoutStrayAnswersAreNotKeptALateOneIs(_ engine: Engine) throws {
        let link = try CommandsOnBroker()
        defer { link.stop() }
        let (broker, commands) = (link.broker, link.commands)
        let rig = try OfficeRig(engine, commands: commands)
        defer { rig.stop() }
        _ = try rig.store.commit(
            events: [], retained: [RetainedUpdate(machine: "m1", subject: "state", payload: #"{"machine":"m1","online":true,"state":"in-service"}"#)],
            receivedAt: rig.noon)
        let machine = try CommandInbox(port: broker.port, machine: "m1")
        var dan = try rig.loggedIn("dan")
        let csrf = try #require(try dan.get("/machine?id=m1").csrf)
        #expect(try dan.post("/dex", [("id", "m1")]).status == 403, "no CSRF token")
        #expect(try dan.post("/dex", [("csrf", csrf), ("id", "m9")]).status == 404)
        // The command connection comes up in the background: until then the office says so.
        try waitUntil("the office sends the request") { try dan.post("/dex", [("csrf", csrf), ("id", "m1")]).status == 303 }
        try waitUntil("the machine receives it") { !machine.commands.isEmpty }
        let command = try #require(machine.commands.first)
        #expect(command.topic == "vendd/m1/cmd/dex")
        #expect(command.responseTopic == "vendd/m1/reply/office-test-commands")
        #expect(String(decoding: command.payload, as: UTF8.self) == #"{"sender":"vendstore office: dan"}"#)
        let token = try #require(command.correlation)
        #expect(try dan.get("/machine?id=m1").body.contains("waiting for the machine's answer"))

        // Answers the office did not ask for: another token, or another machine's topic.
        let stranger = try TestMachineLink(broker.url, name: "stranger")
        try stranger.client.reply("vendd/m1/reply/office-test-commands", Array("DXS*forged".utf8), correlation: Array("not the token".utf8))
        try stranger.client.reply("vendd/m2/reply/office-test-commands", Array("DXS*forged".utf8), correlation: token)
        try stranger.client.reply("vendd/m1/reply/office-test-commands", Array("DXS*forged".utf8), correlation: nil)
        rig.clock.advance(DEXArchive.timeout + 1)
        usleep(500_000)
        let late = try dan.get("/machine?id=m1").body
        #expect(late.contains("no answer within 30 s") && !late.contains("download"), "\(late)")
        #expect(try rig.openSQL().rows("SELECT file FROM dex_audits WHERE file IS NOT NULL", []).isEmpty)

        // A late answer to the request is still archived.
        let file = "DXS*VDD0000001*VA*V0/6*1\r\nDXE*1*1\r\n"
        try stranger.client.reply("vendd/m1/reply/office-test-commands", Array(file.utf8), correlation: token)
        var ann = try rig.loggedIn("ann")
        try waitUntil("the answer is archived") { try ann.get("/machine?id=m1").body.contains("download the DEX file") }
        #expect(try !dan.get("/machine?id=m1").body.contains("download the DEX file"), "a DEX file holds prices: operators only")
        let request = try #require(try rig.openSQL().rows("SELECT request FROM dex_audits", []).first?[0])
        let download = try ann.get("/dex.txt?request=\(request)")
        #expect(download.status == 200 && download.body == file)
        #expect(download.header("Content-Disposition")?.hasPrefix("attachment; filename=\"m1-dex-") == true)
        #expect(try dan.get("/dex.txt?request=\(request)").status == 403)
        #expect(try ann.get("/audit").body.contains("dex-requested"))
    }
}
