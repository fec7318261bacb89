import DEXHandheld
import Foundation
import Testing
import VendDEX
import VendDrivers
import VendSettings
import VenddTestSupport

/// The DEX port's thread speaking DDCMP against a master written from EVA-DTS 6.1.1 chapter 3
/// (not from VendDEX) on a Unix socket, in real time.
@Suite struct DDCMPPortSocketTests {
    typealias Machine = DEXPortSocketTests.Machine
    static let audit = String(decoding: DEXPortSocketTests.audit, as: UTF8.self)
    static let who = "DDCMP route person 'RP'"

    static func rig(machine: Machine = Machine()) throws -> (DDCMPMaster, DEXPort, Machine, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let master = try DDCMPMaster(socketPath: directory.path + "/dex.sock")
        let port = DEXPortSocketTests.startPort(directory.path + "/dex.sock", machine: machine, linkProtocol: .ddcmp)
        #expect(master.waitForMachine())
        return (master, port, machine, directory)
    }

    @Test func aMasterReadsTheWholeAudit() async throws {
        let (master, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        #expect(port.description.hasPrefix("DDCMP on "))
        #expect(master.read() == .audit(Self.audit), "\(master.transcript)")
        #expect(machine.wait(.delivered) == ["\(Self.who) \(DEXPortSocketTests.audit.count)"])
        #expect(machine.seen(.failed).isEmpty && machine.seen(.copied).isEmpty)
        #expect(master.transcript.filter { $0.contains("machine → data message") }.count == 1 + 1 + 3, "Who Are You, Read Data, 3 blocks")
        await port.stop()
    }

    @Test func aSecurityReadIsACopyThatResetsNothing() async throws {
        let (master, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        #expect(master.read(list: 2) == .audit(Self.audit))
        #expect(machine.wait(.copied) == ["\(Self.who) \(DEXPortSocketTests.audit.count)"])
        #expect(machine.seen(.delivered).isEmpty)
        await port.stop()
    }

    /// Noise, missed STACKs, a corrupt command, NACKs and silence: each is recovered from, and
    /// the audit arrives whole, delivered once.
    @Test(arguments: ["noise", "missed STACK", "corrupt Read Data", "NACK", "silence"])
    func faultsTheLinkRecoversFrom(fault: String) async throws {
        let (master, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        var faults = DDCMPMaster.Faults()
        switch fault {
        case "noise": faults.noiseFirst = [0xFF, 0x05, 0x81, 0x00, 0x99, 0x77, 0x05, 0x06]
        case "missed STACK": faults.missedStacks = 2
        case "corrupt Read Data": faults.corruptReads = 1
        case "NACK": faults.nackBlock = [2: 2]
        default: faults.silentOnBlock = 1
        }
        #expect(master.read(faults) == .audit(Self.audit), "\(master.transcript)")
        #expect(machine.wait(.delivered).count == 1)
        #expect(machine.seen(.failed).isEmpty)
        await port.stop()
    }

    /// The cable pulled at every stage: the audit counts as delivered only once Finish reached
    /// the machine; otherwise the session fails. The port reconnects and the next read goes
    /// through.
    @Test(arguments: DDCMPMaster.Stage.allCases)
    func aPulledCable(at stage: DDCMPMaster.Stage) async throws {
        let (master, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        var faults = DDCMPMaster.Faults()
        faults.pullAt = stage
        #expect(master.read(faults) == .pulled(stage))
        if stage == .afterFinish {
            #expect(machine.wait(.delivered).count == 1, "Finish went out before the cable")
        } else {
            #expect(machine.wait(.failed).count == 1)
            #expect(machine.seen(.delivered).isEmpty)
        }
        try master.replug()
        #expect(master.waitForMachine())
        #expect(master.read() == .audit(Self.audit), "\(master.transcript) \(machine.seen(.failed))")
        let reads = stage == .afterFinish ? 2 : 1
        #expect(machine.wait(.delivered, count: reads).count == reads)
        await port.stop()
    }

    @Test func writeDataIsRefusedAndSaidSo() async throws {
        let (master, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        #expect(master.write() == .rejected(command: 0xE3))
        let failed = machine.wait(.failed)
        #expect(failed.count == 1 && failed[0].contains("refused: Write Data"), "\(failed)")
        #expect(machine.seen(.configured).isEmpty)
        await port.stop()
    }

    @Test func noAuditRejectsTheRead() async throws {
        let (master, port, _, directory) = try Self.rig(machine: Machine(audit: nil))
        defer { directory.remove() }
        #expect(master.read() == .rejected(command: 0xE2))
        await port.stop()
    }
}
