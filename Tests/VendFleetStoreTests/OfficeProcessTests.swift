import Foundation
import Testing
import VenddTestSupport

/// The real vendstore binary: `user add|list|remove` as an operator types them, and `serve`
/// with an `office:` section answering on its port.
@Suite("Back office in vendstore", .serialized, .timeLimit(.minutes(3)))
struct OfficeProcessTests {
    @Test func usersAreAddedFromStdinAndTheOfficeServesThem() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let broker = try MosquittoRig(in: directory.path)
        try broker.start()
        defer { broker.stop() }
        let port = try LocalPort.reserve()
        let config = directory.path + "/vendstore.yaml"
        let text = """
            mqtt:
              broker: \(broker.url)
              allow_plaintext: true
            database:
              sqlite: \(directory.path)/fleet.db
            office:
              listen: 127.0.0.1:\(port)

            """
        try text.write(toFile: config, atomically: true, encoding: .utf8)

        let early = try VendstoreProcess.user(["add", "ann", "--role", "operator"], config: config, password: "a long enough password")
        #expect(early.status == 69 && early.errors.contains("no database at \(directory.path)/fleet.db"), "\(early)")

        let store = VendstoreProcess(configPath: config, logPath: directory.path + "/vendstore.log")
        try store.start(config: text)
        defer { store.stop() }
        #expect(store.log.contains("office: listening on 127.0.0.1:\(port)"))

        let added = try VendstoreProcess.user(["add", "ann", "--role", "operator"], config: config, password: "a long enough password")
        #expect(added.status == 0 && added.output == "added ann (operator)\n", "\(added)")
        let short = try VendstoreProcess.user(["add", "bob", "--role", "driver"], config: config, password: "too short")
        #expect(short.status == 1 && short.errors.contains("the password is too short: at least 10 characters"), "\(short)")
        let role = try VendstoreProcess.user(["add", "bob", "--role", "boss"], config: config, password: "a long enough password")
        #expect(role.status == 64 && role.errors.contains("--role boss: say operator or driver"), "\(role)")
        let twice = try VendstoreProcess.user(["add", "ann", "--role", "driver"], config: config, password: "a long enough password")
        #expect(twice.status == 1 && twice.errors.contains("a user 'ann' exists already"), "\(twice)")
        #expect(try VendstoreProcess.user(["list"], config: config).output == "ann\toperator\n")

        var client = OfficeHTTPClient(port: port)
        #expect(try client.logIn("ann", "a long enough password").status == 303)
        #expect(try client.get("/fleet").status == 200)
        #expect(try VendstoreProcess.user(["remove", "ann"], config: config).status == 0)
        #expect(try client.get("/fleet").header("Location") == "/login")
        #expect(try VendstoreProcess.user(["remove", "ann"], config: config).status == 1)
    }

    @Test func plainHTTPBeyondLoopbackIsSaidAtStart() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let broker = try MosquittoRig(in: directory.path)
        try broker.start()
        defer { broker.stop() }
        let store = VendstoreProcess(configPath: directory.path + "/vendstore.yaml", logPath: directory.path + "/vendstore.log")
        try store.start(
            config: """
                mqtt:
                  broker: \(broker.url)
                  allow_plaintext: true
                database:
                  sqlite: \(directory.path)/fleet.db
                office:
                  listen: 0.0.0.0:\(try LocalPort.reserve())
                  plain_http_beyond_loopback: true

                """)
        defer { store.stop() }
        #expect(
            store.log.contains(
                "PLAIN HTTP beyond loopback (plain_http_beyond_loopback: true): passwords and session cookies cross that network in clear"))
    }
}
