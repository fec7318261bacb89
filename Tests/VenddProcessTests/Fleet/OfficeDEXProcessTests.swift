import Foundation
import Testing
import VenddTestSupport

/// The back office's DEX button with the real parts: vendstore (SQLite, an `office:` section) and
/// two simulated vendds on the ACL'd broker, the store's user allowed to write `vendd/+/cmd/dex`.
/// m1 lists `dex` in `mqtt.commands` and answers with its DEX file, which the office archives and
/// serves; m2 does not, and the page says that the machine refused.
@Suite(.oneRealProcessTestAtATime) struct OfficeDEXProcessTests {
    /// curl with a cookie jar: a browser's session, without the browser.
    struct Browser {
        let base: String
        let jar: String

        func get(_ path: String) throws -> String {
            try ProcessRun.run("/usr/bin/curl", ["-s", "-b", jar, "-c", jar, base + path]).output
        }

        /// The answer's status.
        func post(_ path: String, _ fields: [(String, String)]) throws -> String {
            let data = fields.flatMap { ["--data-urlencode", "\($0.0)=\($0.1)"] }
            return try ProcessRun.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-b", jar, "-c", jar] + data + [base + path])
                .output
        }

        static func csrf(_ page: String) -> String? {
            guard let start = page.range(of: "name=\"csrf\" value=\"") else { return nil }
            return String(page[start.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// vendstore with an office on `rig`'s broker, as the store's user, with the operator `ann`.
    static func office(_ rig: FleetRig) throws -> (VendstoreProcess, Browser) {
        let port = try LocalPort.reserve()
        let config = rig.directory.path + "/vendstore.yaml"
        let text = """
            mqtt:
              broker: \(rig.broker.url)
              ca_file: \(rig.broker.caFile)
              credentials_file: \(try rig.broker.credentialsFile(for: MosquittoBroker.storeUser))
              client_id: vendstore-test
            database:
              sqlite: \(rig.directory.path)/fleet.db
            office:
              listen: 127.0.0.1:\(port)

            """
        let store = VendstoreProcess(configPath: config, logPath: rig.directory.path + "/vendstore.log")
        try store.start(config: text)
        let added = try ProcessRun.run(
            "/bin/sh",
            ["-c", #"printf '%s\n' 'a long enough password' | "$0" user add ann --role operator --config "$1""#, builtProduct("vendstore"), config])
        #expect(added.status == 0, "\(added)")
        let browser = Browser(base: "http://127.0.0.1:\(port)", jar: rig.directory.path + "/cookies")
        let login = try #require(Browser.csrf(try browser.get("/login")))
        #expect(try browser.post("/login", [("csrf", login), ("user", "ann"), ("password", "a long enough password")]) == "303")
        return (store, browser)
    }

    /// Waits until the store knows `machines` (their retained state came in).
    static func known(_ machines: [String], _ browser: Browser, _ store: VendstoreProcess) throws {
        let deadline = Date().addingTimeInterval(20)
        while try machines.contains(where: { try browser.get("/machine?id=\($0)").contains("No such machine") }) {
            guard Date() < deadline else { throw HarnessError("the machines' state did not reach the store:\n\(store.log)") }
            usleep(100_000)
        }
    }

    @Test func theOfficeAsksForADEXAuditArchivesItAndSaysWhenAMachineRefuses() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let (store, browser) = try Self.office(rig)
        defer { store.stop(SIGKILL) }
        let m1 = try rig.machine("m1", commands: ["dex"])
        let m2 = try rig.machine("m2")
        try m1.start()
        try m2.start()
        try m1.requireSuccess(m1.vendctl("restock", "all"))

        try Self.known(["m1", "m2"], browser, store)
        let deadline = Date().addingTimeInterval(20)
        for machine in ["m1", "m2"] {
            let csrf = try #require(Browser.csrf(try browser.get("/machine?id=\(machine)")))
            #expect(try browser.post("/dex", [("csrf", csrf), ("id", machine)]) == "303")
        }
        var page = ""
        while !page.contains("download the DEX file") || !page.contains("refused") {
            guard Date() < deadline.addingTimeInterval(20) else { throw HarnessError("no DEX answer shown:\n\(page)\n\(store.log)") }
            usleep(200_000)
            page = try browser.get("/machine?id=m1") + browser.get("/machine?id=m2")
        }
        #expect(page.contains("the machine refused: command &#39;dex&#39; is not allowed on this machine"))
        let link = try #require(page.range(of: "/dex.txt?request=")).lowerBound
        let request = String(page[link...].prefix { $0 != "\"" })
        let file = try browser.get(request)
        #expect(file.hasPrefix("DXS*VDD0000001*VA*V0/6*1\r\n"), "\(file)")
        #expect(file.contains("\r\nPA1*") && file.contains("\r\nDXE*1*1\r\n"))
        #expect(try m1.stop() == 0)
        #expect(try m2.stop() == 0)
        #expect(store.stop())
    }

    /// Without `topic write vendd/+/cmd/dex` for the store's user the broker refuses the command:
    /// vendstore's journal says which ACL line is missing, and the machine never hears of it.
    @Test func aBrokerThatRefusesTheCommandIsNamedInTheLog() throws {
        let rig = try FleetRig(acl: MosquittoBroker.acl.replacingOccurrences(of: "topic write vendd/+/cmd/dex\n", with: ""))
        defer { rig.tearDown() }
        try rig.broker.start()
        let (store, browser) = try Self.office(rig)
        defer { store.stop(SIGKILL) }
        let m1 = try rig.machine("m1", commands: ["dex"])
        try m1.start()
        try Self.known(["m1"], browser, store)
        let csrf = try #require(Browser.csrf(try browser.get("/machine?id=m1")))
        #expect(try browser.post("/dex", [("csrf", csrf), ("id", "m1")]) == "303")
        let deadline = Date().addingTimeInterval(10)
        while !store.log.contains("the broker refused it (not authorised?): the store's broker user needs 'topic write vendd/m1/cmd/dex'") {
            guard Date() < deadline else { throw HarnessError("no refusal logged:\n\(store.log)") }
            usleep(100_000)
        }
        #expect(try browser.get("/machine?id=m1").contains("waiting for the machine's answer"))
        #expect(try m1.stop() == 0)
        #expect(store.stop())
    }
}
