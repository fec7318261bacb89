import DEXHandheld
import Foundation
import Synchronization
import Testing
import VendDEX
import VendDrivers
import VendSettings
import VendTime
import VenddTestSupport

/// The DEX port's driver on its thread against the handheld simulator (written from the
/// specification, not from VendDEX) on a Unix socket, in real time.
@Suite struct DEXPortSocketTests {
    /// Three blocks' worth of audit.
    static let audit = Array(("DXS*VDD0000001*VA*V0/6*1\r\n" + String(repeating: "PA1*A1*150\r\nPA2*1*150*1*150\r\n", count: 20)).utf8)

    /// What the driver handed to the machine's side.
    final class Machine: Sendable {
        enum Report: Hashable { case delivered, copied, configured, failed }
        private let reports = Mutex<[Report: [String]]>([:])
        let audit: [UInt8]?

        init(audit: [UInt8]? = DEXPortSocketTests.audit) { self.audit = audit }

        var handlers: DEXPortHandlers {
            DEXPortHandlers(
                prepareAudit: { [audit] _ in audit },
                auditDelivered: { handheld, text in self.add(.delivered, "\(handheld.communicationID) \(text.count)") },
                configurationReceived: { _, text in self.add(.configured, String(decoding: text, as: UTF8.self)) },
                sessionFailed: { _, stage, reason in self.add(.failed, "\(stage): \(reason)") },
                linkChanged: { _, _ in }, warning: { _ in },
                auditCopied: { handheld, text in self.add(.copied, "\(handheld.communicationID) \(text.count)") })
        }

        private func add(_ report: Report, _ text: String) { reports.withLock { $0[report, default: []].append(text) } }

        func seen(_ report: Report) -> [String] { reports.withLock { $0[report] ?? [] } }

        /// Waits (3 s at most) for the port's thread to report.
        func wait(_ report: Report, count: Int = 1) -> [String] {
            for _ in 0..<300 where seen(report).count < count { usleep(10_000) }
            return seen(report)
        }
    }

    /// A handheld on a fresh socket, and the machine's port connected to it.
    static func rig(machineFirst: Bool = false, machine: Machine = Machine()) throws -> (DEXHandheld, DEXPort, Machine, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let handheld = try DEXHandheld(socketPath: directory.path + "/dex.sock")
        let port = startPort(directory.path + "/dex.sock", machine: machine, machineFirst: machineFirst)
        #expect(handheld.waitForMachine())
        return (handheld, port, machine, directory)
    }

    /// The machine's DEX port on `socket`, started.
    static func startPort(_ socket: String, machine: Machine, machineFirst: Bool = false, linkProtocol: DEXLinkProtocol = .dexUCS) -> DEXPort {
        let port = DEXPort(
            settings: DEXSettings(
                port: "unix:" + socket, baudRate: linkProtocol.defaultBaudRate, communicationID: "VDD0000001", assetNumber: "VM-1",
                machineMakesFirstHandshake: machineFirst, origin: ConfigOrigin(location: .init(file: "t.yaml", line: 1, column: 1), path: "dex"),
                linkProtocol: linkProtocol),
            timekeeper: SystemTimekeeper(threadName: "dex-test"), handlers: machine.handlers)
        port.start()
        return port
    }

    @Test func aHandheldReadsTheWholeAudit() async throws {
        let (handheld, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        #expect(handheld.read() == .audit(String(decoding: Self.audit, as: UTF8.self)))
        #expect(machine.wait(.delivered) == ["HHD0000001 \(Self.audit.count)"])
        #expect(machine.seen(.failed).isEmpty)
        #expect(handheld.transcript.filter { $0.contains("STX") }.count == 3)
        await port.stop()
    }

    @Test func theMachineMakesTheFirstHandshakeWhenConfiguredTo() async throws {
        let (handheld, port, machine, directory) = try Self.rig(machineFirst: true)
        defer { directory.remove() }
        #expect(handheld.answerMachine(within: .seconds(4)) == .audit(String(decoding: Self.audit, as: UTF8.self)))
        #expect(machine.wait(.delivered) == ["HHD0000001 \(Self.audit.count)"])
        #expect(handheld.transcript.contains { $0.contains("\"VDD0000001SR00L06\"") }, "the machine's first handshake, operation S")
        await port.stop()
    }

    @Test func aHandheldSendsPrices() async throws {
        let (handheld, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        let file =
            "DXS*HHD0000001*VA*V0/6*1\r\nST*001*0001\r\nID4*2*978*EUR\r\n" + String(repeating: "PC1*A1*175\r\n", count: 30)
            + "SE*33*0001\r\nDXE*1*1\r\n"
        #expect(
            handheld.sendConfiguration(
                file,
                {
                    var faults = DEXHandheld.Faults()
                    faults.badConfigurationCRCs = 1
                    return faults
                }()) == .configured)
        #expect(machine.wait(.configured) == [file])
        await port.stop()
    }

    /// Noise, a wrong CRC, NAKs, silence and a WACK: each is recovered from, and the audit still
    /// arrives whole, acknowledged once.
    @Test(arguments: ["noise", "handshake CRC", "NAK", "silence", "WACK"])
    func faultsTheLinkRecoversFrom(fault: String) async throws {
        let (handheld, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        var faults = DEXHandheld.Faults()
        switch fault {
        case "noise": faults.noiseFirst = [0xFF, 0x10, 0x7F, 0x02, 0x41]
        case "handshake CRC": faults.badHandshakeCRCs = 2
        case "NAK": faults.nakBlock = [2: 2]
        case "silence": faults.silentOnBlock = 1
        default: faults.wackOnBlock = 3
        }
        #expect(handheld.read(faults) == .audit(String(decoding: Self.audit, as: UTF8.self)))
        #expect(machine.wait(.delivered).count == 1)
        await port.stop()
    }

    /// The cable pulled at every stage: the audit counts as delivered only when the handheld's
    /// acknowledgement of the last block reached the machine; otherwise the session fails. The
    /// port then reconnects and the next read goes through.
    @Test(arguments: DEXHandheld.Stage.allCases)
    func aPulledCable(at stage: DEXHandheld.Stage) async throws {
        let (handheld, port, machine, directory) = try Self.rig()
        defer { directory.remove() }
        var faults = DEXHandheld.Faults()
        faults.pullAt = stage
        #expect(handheld.read(faults) == .pulled(stage))
        if stage == .afterLastAck {
            #expect(machine.wait(.delivered).count == 1, "the last ACK went out before the cable")
        } else {
            #expect(machine.wait(.failed).count == 1)
            #expect(machine.seen(.delivered).isEmpty)
        }
        try handheld.replug()
        #expect(handheld.waitForMachine())
        #expect(handheld.read() == .audit(String(decoding: Self.audit, as: UTF8.self)), "\(handheld.transcript) \(machine.seen(.failed))")
        #expect(machine.wait(.delivered, count: stage == .afterLastAck ? 2 : 1).count == (stage == .afterLastAck ? 2 : 1))
        await port.stop()
    }

    /// A read the machine cannot make an audit for is answered 04.
    @Test func noAuditIsAnswered04() async throws {
        let (handheld, port, _, directory) = try Self.rig(machine: Machine(audit: nil))
        defer { directory.remove() }
        #expect(handheld.read() == .refused(code: "04"))
        await port.stop()
    }

    /// R01L01, the original revision, still in the field.
    @Test func anOldRevisionHandheldReads() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let handheld = try DEXHandheld(socketPath: directory.path + "/dex.sock", revision: "R01L01")
        let port = Self.startPort(directory.path + "/dex.sock", machine: Machine())
        #expect(handheld.waitForMachine())
        #expect(handheld.read() == .audit(String(decoding: Self.audit, as: UTF8.self)))
        await port.stop()
    }
}
