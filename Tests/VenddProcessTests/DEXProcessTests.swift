import DEXHandheld
import Foundation
import Testing
import VendControl
import VenddTestSupport

/// The real vendd with a `dex:` port on a Unix socket, read by the handheld simulator as a route
/// driver would: the audit, its interim figures reset only by a read acknowledged to the end,
/// durably, and a price download.
@Suite(.oneRealProcessTestAtATime) struct DEXProcessTests {
    final class Rig: @unchecked Sendable {
        // @unchecked: used from one test at a time.
        let socketDirectory: TemporaryDirectory
        /// Where the handheld listens and the machine's DEX port connects.
        let socketPath: String
        let daemon: DaemonHarness

        /// `dex` adds keys to the `dex:` section, `sections` whole sections before it.
        init(dex: String = "", sections: String = "") throws {
            socketDirectory = try TemporaryDirectory()
            let socketPath = socketDirectory.path + "/dex.sock"
            self.socketPath = socketPath
            daemon = try DaemonHarness { sample in
                sample + sections + "\ndex:\n  port: unix:\(socketPath)\n  communication_id: VDD0000042\n  asset: CORRIDOR-B2\n" + dex
            }
        }

        /// One cola from A4 for 1500 won.
        func sell() throws {
            let sold = try daemon.status().books.itemsSold
            for _ in 0..<3 { try daemon.send(.sim(.coin(amount: "500"))) }
            try daemon.send(.sim(.press(slot: "A4")))
            _ = try daemon.waitUntil("the sale") { $0.books.itemsSold == sold + 1 && $0.vendInProgress == nil }
        }

        /// The audit's segment starting `start`, or the one `offset` after it, as the handheld
        /// received it.
        func segment(_ start: String, _ offset: Int = 0, of outcome: DEXHandheld.Outcome) throws -> String {
            guard case .audit(let text) = outcome else { throw HarnessError("no audit: \(outcome)") }
            return try segment(start, offset, in: text)
        }

        func segment(_ start: String, _ offset: Int = 0, of outcome: DDCMPMaster.Outcome) throws -> String {
            guard case .audit(let text) = outcome else { throw HarnessError("no audit: \(outcome)") }
            return try segment(start, offset, in: text)
        }

        private func segment(_ start: String, _ offset: Int, in text: String) throws -> String {
            let lines = text.components(separatedBy: "\r\n")
            guard let index = lines.firstIndex(where: { $0.hasPrefix(start + "*") }), index + offset < lines.count else {
                throw HarnessError("no \(start) in\n\(text)")
            }
            return lines[index + offset]
        }

        func tearDown() {
            daemon.tearDown()
            socketDirectory.remove()
        }
    }

    /// A read cut before the last acknowledgement resets nothing; the next full read reports the
    /// same interim figures and resets them; the reset survives kill -9 and a restart; a sale
    /// after it counts once, in the next read.
    @Test func readAndResetLosesAndDoublesNothing() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        let handheld = try DEXHandheld(socketPath: rig.socketPath, communicationID: "RTE0000007")
        try rig.daemon.start()
        try rig.daemon.send(.restock(slot: "A4", count: 5))
        try rig.sell()
        #expect(handheld.waitForMachine())

        var cut = DEXHandheld.Faults()
        cut.pullAt = .beforeLastAck
        #expect(handheld.read(cut) == .pulled(.beforeLastAck))
        try rig.daemon.waitForLog("DEX RTE0000007 read: failed")
        try handheld.replug()

        let first = handheld.read()
        #expect(try rig.segment("VA1", of: first) == "VA1*1500*1*1500*1", "the cut read reset nothing")
        #expect(try rig.segment("ID1", of: first) == "ID1*VDD0000042*VENDD*1*Corridor B, 2nd floor**CORRIDOR-B2")
        try rig.daemon.waitForLog("DEX RTE0000007 read: delivered")
        #expect(rig.daemon.log.contains("interim figures reset"))
        #expect(try rig.daemon.send(.sales(since: nil)).sales?.sinceLastRead?.total.count == 0)

        try rig.sell()
        let second = handheld.read()
        #expect(try rig.segment("VA1", of: second) == "VA1*3000*2*1500*1", "the sale after the read, once")
        #expect(try rig.segment("PA1*A4", 1, of: second) == "PA2*2*3000*1*1500")
        try rig.daemon.waitForLog("DEX RTE0000007 read: delivered", count: 2)

        // The reset is journaled like any state change: kill -9 right after it loses nothing.
        rig.daemon.signal(SIGKILL)
        _ = try rig.daemon.waitForExit()
        try rig.daemon.start()
        #expect(handheld.waitForMachine())
        // The handheld reads the very report `vendctl audit` writes just before, with the dex:
        // section's IDs without being told them; only EA3's "this interrogation" (date, time,
        // reader) is the read's own.
        let file = rig.daemon.directory.path + "/audit.dex"
        try rig.daemon.requireSuccess(rig.daemon.vendctl("audit", "--dex", file))
        let third = handheld.read()
        #expect(try rig.segment("VA1", of: third) == "VA1*3000*2*0*0")
        #expect(try rig.segment("CA3", of: third) == "CA3*0*0*0*0*3000*3000*0*0")
        guard case .audit(let read) = third else { throw HarnessError("no audit: \(third)") }
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(AuditCheck.firstDifference(read, from: written) == nil, "\(read)\n\(written)")
        #expect(AuditCheck.problems(written).isEmpty)
        #expect(try rig.segment("EA3", of: third).hasPrefix("EA3*2*"), "two reads with reset before this one")
        #expect(try rig.segment("EA3", of: third).contains("*RTE0000007*"), "this read's handheld and the last one's")
        #expect(try rig.segment("EA3", of: third).hasSuffix("**2*2"), "EA309 2 reads, EA310 2 resets")
        let status = try rig.daemon.waitUntil("the session in status") { $0.dexPort?.sessions.last?.result == "delivered" }
        #expect(status.dexPort?.sessions.last?.handheld == "RTE0000007")
        #expect(try rig.daemon.stop() == 0)
    }

    /// SD105 as EVA-DTS 6.1.1 §2.6.1 (p.42) words it: "SAVE … The interval data will not be
    /// automatically reset after each read transfer. This mode will stay in effect until an AUTO
    /// command is received"; "RESET … All interval data will be reset after the current
    /// successful SD105 transfer. Sending RESET does not change the AUTO or SAVE mode". The mode
    /// is durable (a restart keeps it) and shown in status; p.43's visit: read, then RESET.
    @Test func SD105SaveThenReset() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        let handheld = try DEXHandheld(socketPath: rig.socketPath, communicationID: "RTE0000007")
        try rig.daemon.start()
        try rig.daemon.send(.restock(slot: "A4", count: 5))
        try rig.sell()
        #expect(handheld.waitForMachine())
        func sd1(_ control: String) -> String {
            ["DXS*RTE0000007*VA*V0/6*1", "ST*001*0001", "SD1*****\(control)", "SE*3*0001", "DXE*1*1"].map { $0 + "\r\n" }.joined()
        }
        #expect(handheld.sendConfiguration(sd1("SAVE")) == .configured)
        try rig.daemon.waitForLog("DEX RTE0000007 configure: configured: 1 setting(s) applied (SD105 SAVE)")
        #expect(try rig.daemon.stop() == 0)
        try rig.daemon.start()
        #expect(handheld.waitForMachine())
        let saved = try rig.daemon.waitUntil("the DEX port in status") { $0.dexPort != nil }
        #expect(saved.dexPort?.intervalResetMode == "SAVE", "SAVE outlives a restart")
        #expect(saved.dexPort?.lastReadAt == nil, "no handheld read it yet (a configuration is no read)")
        #expect(try rig.daemon.vendctl("status").output.contains("SD105 SAVE: a read resets nothing"))

        #expect(try rig.segment("VA1", of: handheld.read()) == "VA1*1500*1*1500*1")
        try rig.daemon.waitForLog("SD105 is SAVE: interim figures NOT reset")
        #expect(try rig.segment("VA1", of: handheld.read()) == "VA1*1500*1*1500*1", "a complete read in SAVE resets nothing")
        try rig.daemon.waitForLog("DEX RTE0000007 read: delivered", count: 2)

        #expect(handheld.sendConfiguration(sd1("RESET")) == .configured)
        try rig.daemon.waitForLog("SD105 RESET: interim figures reset")
        let third = handheld.read()
        #expect(try rig.segment("VA1", of: third) == "VA1*1500*1*0*0")
        #expect(try rig.segment("EA3", of: third).hasPrefix("EA3*0*"), "no read reset them (EA301)")
        #expect(try rig.segment("EA3", of: third).hasSuffix("**2*1"), "two reads before this one, one reset (EA309, EA310)")
        let status = try rig.daemon.waitUntil("the third read") { $0.dexPort?.reads == 3 }
        #expect(status.dexPort?.intervalResetMode == "SAVE" && status.dexPort?.resets == 1, "RESET leaves the mode")
        let lastRead = try #require(status.dexPort?.lastReadAt, "the last read's time, for the office's DEX alert")
        #expect(abs(lastRead - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000)
        for line in rig.daemon.allLogs.split(separator: "\n") where line.contains("DEX RTE0000007") { print(line) }
        #expect(try rig.daemon.stop() == 0)
    }

    /// Prices from the handheld go through the path of `vendctl price`: what it refuses is
    /// refused and said, the rest applied, and the next audit carries the new price.
    @Test func aPriceDownload() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        let handheld = try DEXHandheld(socketPath: rig.socketPath, communicationID: "RTE0000007")
        try rig.daemon.start()
        #expect(handheld.waitForMachine())
        let file = ["DXS*RTE0000007*VA*V0/6*1", "ST*001*0001", "ID4*0*410*KRW", "PC1*A4*1600", "PC1*Z9*100", "PC1*A1*12.5", "SE*6*0001", "DXE*1*1"]
            .map { $0 + "\r\n" }.joined()
        #expect(handheld.sendConfiguration(file) == .configured)
        let status = try rig.daemon.waitUntil("the session in status") { $0.dexPort?.sessions.isEmpty == false }
        #expect(status.slot("A4")?.price == "1600")
        let session = try #require(status.dexPort?.sessions.last)
        #expect(session.operation == "configure" && session.result == "configured with refusals")
        #expect(session.detail.contains("PC1*Z9*100: no slot Z9"))
        #expect(session.detail.contains("PC1*A1*12.5: the price '12.5' is not a whole number of minor units"))
        try rig.daemon.waitForLog("DEX RTE0000007 configure: configured with refusals")
        #expect(status.slot("A1")?.price == "1200", "a refused price changes nothing")
        let json = try DaemonHarness.vendctl(["--socket", rig.daemon.socketPath, "--json", "status"])
        #expect(try DocumentedSchemas().violations(of: "status", in: json.output) == [], "the dex port as docs/vendctl.md says")
        #expect(try rig.daemon.vendctl("status").output.contains("RTE0000007 configure: configured with refusals: 1 setting(s) applied"))
        #expect(try rig.segment("PA1*A4", of: handheld.read()) == "PA1*A4*1600")
        #expect(try rig.daemon.stop() == 0)
    }

    /// A download of price lists: LA1 sets a list's price for every payment, PA7 one payment's;
    /// a list the machine does not have, and list 0, are refused with their reasons; the lines
    /// are what `vendctl price --list --payment` would have set, and outlive a restart.
    @Test func aPriceListDownload() throws {
        let rig = try Rig(sections: "\npricing:\n  time_zone: UTC\n  lists:\n    - { list: 2, name: \"happy hour\" }\n")
        defer { rig.tearDown() }
        let handheld = try DEXHandheld(socketPath: rig.socketPath, communicationID: "RTE0000007")
        try rig.daemon.start()
        #expect(handheld.waitForMachine())
        let file = [
            "DXS*RTE0000007*VA*V0/6*1", "ST*001*0001", "ID4*0*410*KRW", "LA1*2*A4*1300*0*0", "PA7*A4*DA*1*1400", "PA7*A1*CA*2*900",
            "LA1*3*A4*1000", "LA1*0*A4*1300", "SE*9*0001", "DXE*1*1",
        ].map { $0 + "\r\n" }.joined()
        #expect(handheld.sendConfiguration(file) == .configured)
        let status = try rig.daemon.waitUntil("the session in status") { $0.dexPort?.sessions.isEmpty == false }
        let session = try #require(status.dexPort?.sessions.last)
        #expect(session.result == "configured with refusals", "\(session.detail)")
        #expect(session.detail.contains("LA1*3*A4*1000: there is no price list 3: pricing.lists has list 1 and 2"), "\(session.detail)")
        #expect(session.detail.contains("LA1*0*A4*1300: price list 0: this machine numbers its lists from 1"), "\(session.detail)")

        func lines() throws -> [String] {
            let report = try #require(try rig.daemon.send(.prices).prices)
            return report.slots.flatMap { slot in
                slot.lines.filter { $0.source == "run-time" }.map { "\(slot.slot) list \($0.list) \($0.payment) \($0.price)" }
            }
        }
        #expect(try lines().sorted() == ["A1 list 2 cash 900", "A4 list 1 cashless1 1400", "A4 list 2 any 1300"])
        #expect(status.slot("A4")?.price == "1500", "list 1's own price for every payment is not touched")
        #expect(try rig.daemon.stop() == 0)
        try rig.daemon.start()
        #expect(try lines().count == 3, "journaled as vendctl price's lines are")
        #expect(try rig.daemon.stop() == 0)
    }
}

/// The same port speaking DDCMP, read by the DDCMP master simulator: the interim figures reset
/// only by an audit collection (list 1) acknowledged to its last block and finished, durably; a
/// security read (list 2) resets nothing.
@Suite(.oneRealProcessTestAtATime) struct DDCMPProcessTests {
    @Test func readAndResetLosesAndDoublesNothing() throws {
        let rig = try DEXProcessTests.Rig(dex: "  protocol: ddcmp\n")
        defer { rig.tearDown() }
        let master = try DDCMPMaster(socketPath: rig.socketPath)
        try rig.daemon.start()
        try rig.daemon.send(.restock(slot: "A4", count: 5))
        try rig.sell()
        #expect(master.waitForMachine())

        // Every block acknowledged, but the cable out before Finish: nothing is reset.
        var cut = DDCMPMaster.Faults()
        cut.pullAt = .beforeFinish
        #expect(master.read(cut) == .pulled(.beforeFinish))
        try rig.daemon.waitForLog("DEX DDCMP route person 'RP' read: failed")
        try master.replug()

        let first = master.read()
        #expect(try rig.segment("VA1", of: first) == "VA1*1500*1*1500*1", "the cut read reset nothing")
        try rig.daemon.waitForLog("DEX DDCMP route person 'RP' read: delivered")
        #expect(rig.daemon.log.contains("interim figures reset"))
        #expect(try rig.daemon.send(.sales(since: nil)).sales?.sinceLastRead?.total.count == 0)

        try rig.sell()
        #expect(try rig.segment("VA1", of: master.read(list: 2)) == "VA1*3000*2*1500*1")
        try rig.daemon.waitForLog("(security read): interim figures left as they are")
        let second = master.read()
        #expect(try rig.segment("VA1", of: second) == "VA1*3000*2*1500*1", "the security read reset nothing; the sale counts once")
        try rig.daemon.waitForLog("DEX DDCMP route person 'RP' read: delivered", count: 2)

        // The reset is journaled: kill -9 right after it loses nothing.
        rig.daemon.signal(SIGKILL)
        _ = try rig.daemon.waitForExit()
        try rig.daemon.start()
        #expect(master.waitForMachine())
        #expect(try rig.segment("VA1", of: master.read()) == "VA1*3000*2*0*0")
        let status = try rig.daemon.waitUntil("the session in status") { $0.dexPort?.sessions.last?.result == "delivered" }
        #expect(status.dexPort?.sessions.last?.handheld == "DDCMP route person 'RP'")
        #expect(status.dexPort?.port.hasSuffix("(DDCMP)") == true)
        #expect(try rig.daemon.stop() == 0)
    }

    /// EVA-DTS 6.1.1 §6.1.6 (p.178): "A newly manufactured slave has a 4 byte zero value set. A
    /// zero value grants access on every requested code. If the requested code is not zero, the
    /// slave grants access and stores the requested code immediately as the new code. Further
    /// requests only gain access with this newly set code." Kept across a restart (journaled);
    /// a technician at the machine clears it.
    @Test func thePassCodeIsLearntKeptCheckedAndCleared() throws {
        let rig = try DEXProcessTests.Rig(dex: "  protocol: ddcmp\n")
        defer { rig.tearDown() }
        try rig.daemon.start()
        let route = try DDCMPMaster(socketPath: rig.socketPath, securityCode: [0x12, 0x34, 0x56, 0x78])
        #expect(route.waitForMachine())
        #expect(try rig.segment("VA1", of: route.read()) == "VA1*0*0*0*0", "a new machine reads for any code")
        try rig.daemon.waitForLog("security and pass code learnt and kept")
        route.unplug()

        rig.daemon.signal(SIGKILL)
        _ = try rig.daemon.waitForExit()
        let other = try DDCMPMaster(socketPath: rig.socketPath, securityCode: [0, 0, 0, 1])
        try rig.daemon.start()
        #expect(other.waitForMachine())
        #expect(other.read() == .rejected(command: 0xE0), "the learnt code outlives a restart: another is refused")
        let kept = try rig.daemon.waitUntil("the DEX port in status") { $0.dexPort != nil }
        #expect(kept.dexPort?.passCodeSet == true)
        #expect(try rig.daemon.vendctl("status").output.contains("pass code kept (vendctl dex clear-pass-code)"))

        let outside = try rig.daemon.vendctl("dex", "clear-pass-code")
        #expect(outside.status == 1 && outside.errors.contains("needs service mode"), "\(outside.errors)")
        try rig.daemon.send(.service(on: true))
        let cleared = try rig.daemon.vendctl("dex", "clear-pass-code")
        #expect(cleared.status == 0 && cleared.output.contains("DEX pass code cleared by"), "\(cleared.output)\(cleared.errors)")
        try rig.daemon.send(.service(on: false))
        #expect(try rig.daemon.status().dexPort?.passCodeSet == false)
        #expect(try rig.segment("VA1", of: other.read()) == "VA1*0*0*0*0", "cleared: any code reads, and the next is learnt")
        try rig.daemon.waitForLog("security and pass code learnt and kept", count: 2)
        #expect(try rig.daemon.stop() == 0)
    }
}
