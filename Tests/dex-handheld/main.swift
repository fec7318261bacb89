import DEXHandheld
import Foundation
import SocketPlug
import VendPOSIX

/// `dex-handheld --socket PATH [--id ID] [--save DIR]`
/// A route driver's handheld on the machine's DEX jack (Tests/DEXHandheld: DEX/UCS from EVA-DTS
/// chapter 4, a DDCMP master from chapter 3), listening on PATH, driven by commands on stdin (one
/// per line); every session's outcome is printed on stdout. Exits 1 at the end of its input if
/// any session did not end as asked (`help` lists the commands).
let usage = """
    usage: dex-handheld --socket PATH [--id HHD0000001] [--save DIR]
      --id                the handheld's communication ID (DEX/UCS first handshake)
      --save DIR          every audit read is kept as DIR/read-N.dex
    commands (stdin, one per line):
      expect SEGMENT      the next audit read must be, byte for byte, the file of the segments given
                          so far, one per command, without CR LF (what `vendctl audit --dex` wrote),
                          but for EA3's date, time and reader of this read (EA302-EA304) and G85
      read [STAGE]        DEX/UCS: read the audit (first handshake R, second handshake, the blocks);
                          with STAGE the cable is pulled there and the read must end so: \(DEXHandheld.Stage.allCases.map { "\($0)" }.joined(separator: ", "))
      ddcmp-read [STAGE]  DDCMP: START, Who Are You, Read Data of list 1, the blocks, Finish; with
                          STAGE the cable pulled there: \(DDCMPMaster.Stage.allCases.map { "\($0)" }.joined(separator: ", "))
      prices DECIMALS SLOT=PRICE...
                          DEX/UCS: send a configuration (first handshake S): ID4 with DECIMALS, a
                          PC1 record per price, in minor units
      replug              put the handheld back on the jack after a pulled cable
      status | help | quit
    A read or ddcmp-read after the other kind takes the first handheld off the jack and plugs the
    other on the same socket, as a route driver swaps handhelds.
    """

guard let socketPath = SimulatorConsole.value(after: "--socket") else {
    StandardError.write(usage + "\n")
    exit(64)
}

/// The handheld on the jack now.
enum Plugged {
    case dexUCS(DEXHandheld)
    case ddcmp(DDCMPMaster)

    func unplug() {
        switch self {
        case .dexUCS(let handheld): handheld.unplug()
        case .ddcmp(let master): master.unplug()
        }
    }

    func replug() throws {
        switch self {
        case .dexUCS(let handheld): try handheld.replug()
        case .ddcmp(let master): try master.replug()
        }
    }
}

/// How a read ended, whichever handheld made it.
enum Ended {
    case audit(String)
    /// The cable was pulled at the stage described so.
    case pulled(String)
    case other(String)

    init(_ outcome: DEXHandheld.Outcome) {
        switch outcome {
        case .audit(let text): self = .audit(text)
        case .pulled(let stage): self = .pulled(stage.rawValue)
        default: self = .other("\(outcome)")
        }
    }

    init(_ outcome: DDCMPMaster.Outcome) {
        switch outcome {
        case .audit(let text): self = .audit(text)
        case .pulled(let stage): self = .pulled(stage.rawValue)
        default: self = .other("\(outcome)")
        }
    }
}

/// The route driver at the jack: the handheld plugged in, the sessions so far, the file the next
/// read must bring.
@MainActor final class RouteDriver {
    private(set) var plugged: Plugged
    private(set) var sessions = 0, audits = 0, unexpected = 0
    var expected: [String] = []
    let socketPath: String, communicationID: String, saveDirectory: String?

    init(socketPath: String, communicationID: String, saveDirectory: String?) throws {
        self.socketPath = socketPath
        self.communicationID = communicationID
        self.saveDirectory = saveDirectory
        plugged = .dexUCS(
            try DEXHandheld(socketPath: socketPath, communicationID: communicationID, report: { SimulatorConsole.say("handheld: \($0)") }))
    }

    var status: String { "status: \(sessions) sessions, \(audits) audits read, \(unexpected) unexpected" }

    func failed(_ line: String, _ error: any Error) {
        unexpected += 1
        SimulatorConsole.say("UNEXPECTED: \(line): \(error)")
    }

    private func dexUCS() throws -> DEXHandheld {
        if case .dexUCS(let handheld) = plugged { return handheld }
        plugged.unplug()
        let handheld = try DEXHandheld(socketPath: socketPath, communicationID: communicationID, report: { SimulatorConsole.say("handheld: \($0)") })
        plugged = .dexUCS(handheld)
        SimulatorConsole.say("a DEX/UCS handheld (\(communicationID)) on the jack")
        return handheld
    }

    private func ddcmp() throws -> DDCMPMaster {
        if case .ddcmp(let master) = plugged { return master }
        plugged.unplug()
        let master = try DDCMPMaster(socketPath: socketPath, report: { SimulatorConsole.say("master: \($0)") })
        plugged = .ddcmp(master)
        SimulatorConsole.say("a DDCMP master on the jack")
        return master
    }

    /// One session's end: what it was, and whether it ended as asked.
    private func report(_ what: String, _ outcome: String, ok: Bool) {
        sessions += 1
        if !ok { unexpected += 1 }
        SimulatorConsole.say("session \(sessions), \(what): \(ok ? "" : "UNEXPECTED: ")\(outcome)")
    }

    /// An audit read whole: the handheld's own checks, the expected file if one was given, saved.
    private func received(_ text: String, by what: String) {
        audits += 1
        var problems = AuditCheck.problems(text)
        if !expected.isEmpty {
            let want = expected.map { $0 + "\r\n" }.joined()
            // The same report but for EA3's date, time and reader of this read (and so G85).
            if let index = AuditCheck.firstDifference(text, from: want) {
                let got = text.components(separatedBy: "\r\n"), wanted = want.components(separatedBy: "\r\n")
                problems.append(
                    "differs from the expected file at segment \(index + 1): '\(index < got.count ? got[index] : "(end)")', want '\(index < wanted.count ? wanted[index] : "(end)")'"
                )
            }
        }
        var saved = ""
        if let saveDirectory {
            let path = "\(saveDirectory)/read-\(audits).dex"
            do {
                try text.write(toFile: path, atomically: false, encoding: .utf8)
                saved = "; saved as \(path)"
            } catch {
                problems.append("cannot save \(path): \(error)")
            }
        }
        let checks = expected.isEmpty ? "G85 and SE check" : "G85 and SE check, equal to the \(expected.count) expected segments"
        expected = []
        report(
            what,
            "audit \(audits), \(text.utf8.count) bytes, \(problems.isEmpty ? checks : problems.joined(separator: "; "))\(saved); "
                + (AuditCheck.segment("VA1", in: text) ?? "no VA1"), ok: problems.isEmpty)
    }

    func read(_ words: [String]) throws {
        let handheld = try dexUCS()
        session("DEX/UCS read", words) { (pull: DEXHandheld.Stage?) in
            var faults = DEXHandheld.Faults()
            faults.pullAt = pull
            return Ended(handheld.read(faults))
        }
    }

    func ddcmpRead(_ words: [String]) throws {
        let master = try ddcmp()
        session("DDCMP read", words) { (pull: DDCMPMaster.Stage?) in
            var faults = DDCMPMaster.Faults()
            faults.pullAt = pull
            return Ended(master.read(faults))
        }
    }

    /// A read, with the cable pulled at the stage the command names (`words[1]`), if any: it
    /// must bring the whole audit, or end pulled there.
    private func session<Stage: CaseIterable & RawRepresentable<String>>(_ what: String, _ words: [String], _ read: (Stage?) -> Ended) {
        var pull: Stage?
        if words.count == 2 {
            guard let stage = Stage.allCases.first(where: { "\($0)" == words[1] }) else {
                return SimulatorConsole.say("? no stage '\(words[1])' (try help)")
            }
            pull = stage
        }
        switch (read(pull), pull) {
        case (.audit(let text), nil): received(text, by: what)
        case (.pulled(let stage), let pull?) where stage == pull.rawValue: report(what, "cable pulled \(stage), as asked", ok: true)
        case (.audit, _?): report(what, "the whole audit, though the cable was to be pulled", ok: false)
        case (.pulled(let stage), _): report(what, "cable pulled \(stage), not as asked", ok: false)
        case (.other(let outcome), _): report(what, outcome, ok: false)
        }
    }

    func sendPrices(_ words: [String]) throws {
        let prices = words.dropFirst(2).map { $0.split(separator: "=").map(String.init) }
        guard words.count >= 3, let decimals = Int(words[1]), prices.allSatisfy({ $0.count == 2 && Int($0[1]) != nil }) else {
            return SimulatorConsole.say("? prices DECIMALS SLOT=PRICE... (try help)")
        }
        let handheld = try dexUCS()
        let records = ["ST*001*0001", "ID4*\(decimals)"] + prices.map { "PC1*\($0[0])*\($0[1])" }
        let file = (["DXS*\(communicationID)*VA*V0/6*1"] + records + ["SE*\(records.count + 1)*0001", "DXE*1*1"]).map { $0 + "\r\n" }.joined()
        let outcome = handheld.sendConfiguration(file)
        report("DEX/UCS configuration (\(prices.map { "\($0[0]) \($0[1])" }.joined(separator: ", ")))", "\(outcome)", ok: outcome == .configured)
    }
}

let driver: RouteDriver
do {
    driver = try RouteDriver(
        socketPath: socketPath, communicationID: SimulatorConsole.value(after: "--id") ?? "HHD0000001",
        saveDirectory: SimulatorConsole.value(after: "--save"))
} catch {
    StandardError.write("dex-handheld: cannot listen on \(socketPath): \(error)\n")
    exit(71)
}

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first else { continue }
    do {
        switch (command, words.count) {
        case ("expect", 2...): driver.expected.append(String(line.dropFirst("expect ".count)))
        case ("read", 1...2): try driver.read(words)
        case ("ddcmp-read", 1...2): try driver.ddcmpRead(words)
        case ("prices", _): try driver.sendPrices(words)
        case ("replug", 1): try driver.plugged.replug()
        case ("status", 1): SimulatorConsole.say(driver.status)
        case ("help", _): SimulatorConsole.say(usage)
        case ("quit", _): exit(driver.unexpected == 0 ? 0 : 1)
        default: SimulatorConsole.say("? \(line) (try help)")
        }
    } catch {
        driver.failed(line, error)
    }
}
driver.plugged.unplug()
SimulatorConsole.say(driver.status)
exit(driver.unexpected == 0 ? 0 : 1)
