import Foundation
import MDB
import MDBSocketSimulator
import SimulatedMDB
import Testing
import VendSettings
import VendTime
import VendingCore

@testable import VendDrivers
@testable import VendHardware

/// MDBBus on its own thread, over the Qibixx line transport and a real Unix socket, against the
/// simulated interface: what the unit tests above leave out (lines, reconnecting). Real time:
/// each wait is for a condition, with a deadline, never a fixed sleep.
@Suite(.serialized) struct MDBSocketTests {
    static func settings(_ path: String) -> MDBSettings {
        MDBSettings(
            port: "unix:" + path, currency: MDBRig.krw, currencyNumeric: 410, pollInterval: .milliseconds(50),
            changer: MDBChangerSettings(coins: MDBRig.coins), billValidator: MDBBillValidatorSettings(bills: MDBRig.bills, escrow: true))
    }

    static func socketPath() -> String { "/tmp/vendd-mdb-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock" }

    func waitFor(_ timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    @Test func coinsBillsAndPayoutsOverTheQibixxLinesAndAReconnectAfterUnplug() async throws {
        let path = Self.socketPath()
        let simulator = try MDBSocketSimulator(socketPath: path)
        defer { simulator.unplug() }
        simulator.with { $0.changer.tubes[0...3] = [10, 10, 10, 10] }
        let log = MDBEventLog()
        let results = PayoutResults()
        let bus = MDBBus(settings: Self.settings(path), timekeeper: SystemTimekeeper())
        bus.setAcceptance(true)
        bus.setBillLimit(MDBRig.won(10000))
        bus.start(lastSequence: { _ in nil }, deliver: log.record)

        #expect(simulator.wait { $0.changer.acceptMask == [0, 1, 2, 3] && $0.bills.acceptMask == [0, 1, 2, 3] })
        #expect(simulator.with { $0.masterMode })
        simulator.with { $0.changer.insert(type: 3) }
        simulator.with { $0.bills.insert(type: 1) }
        #expect(waitFor { log.coins.count == 1 && log.bills.count == 1 })
        simulator.with { $0.bills.insert(type: 3) }
        #expect(simulator.wait { $0.bills.returned == [3] }, "50,000 won is more than the machine takes: returned")

        bus.pay(MDBRig.won(650)) { results.record($0) }
        #expect(waitFor { results.all.count == 1 })
        #expect(results.all.first?.paid == MDBRig.won(650))

        simulator.unplug()
        #expect(waitFor { log.faults.contains { $0.contains("MDB interface on unix:\(path)") } })
        try simulator.replug()
        #expect(waitFor { log.notices.filter { $0.hasPrefix("MDB interface ready on unix:\(path)") }.count == 2 })
        #expect(simulator.wait { $0.masterMode && $0.changer.acceptMask == [0, 1, 2, 3] }, "M,1 again: master mode does not survive a replug")
        simulator.with { $0.changer.insert(type: 2) }
        #expect(waitFor { log.coins.count == 2 })
        #expect(log.coins.map(\.value) == [MDBRig.won(500), MDBRig.won(100)])
        #expect(log.coins.map(\.event.sequence) == [1, 2], "numbered on across the reconnect")
        let (taken, stacked) = simulator.with { ($0.changer.coinsTaken, $0.bills.stacked) }
        #expect(taken == [3, 2] && stacked == [1], "everything the devices took was credited, once")

        await bus.stop()
        #expect(simulator.with { $0.changer.acceptMask.isEmpty && $0.bills.acceptMask.isEmpty }, "stopping refuses coins and bills")
    }

    /// The interface is unplugged while a slow changer pays and stays away: after the changer's
    /// stall limit the payout ends, the chunk in flight unknown, and the machine is not held.
    @Test func anInterfaceUnpluggedForGoodMidPayoutEndsItUnknownAfterTheStallLimit() async throws {
        let path = Self.socketPath()
        let simulator = try MDBSocketSimulator(socketPath: path)
        defer { simulator.unplug() }
        simulator.with { devices in
            devices.changer.tubes[0...3] = [100, 40, 0, 40]
            devices.changer.clock = { ContinuousClock.now }
            devices.changer.faults.coinInterval = .milliseconds(400)
        }
        let settings = Self.settings(path)
        let stall: Duration = .seconds(5)
        let bus = MDBBus(
            settings: MDBSettings(
                port: settings.port, currency: settings.currency, currencyNumeric: settings.currencyNumeric,
                pollInterval: settings.pollInterval, changer: MDBChangerSettings(coins: MDBRig.coins, payoutStallLimit: stall),
                billValidator: nil),
            timekeeper: SystemTimekeeper())
        let log = MDBEventLog()
        let results = PayoutResults()
        bus.start(lastSequence: { _ in nil }, deliver: log.record)
        #expect(waitFor { log.notices.contains { $0 == "coin changer (08h) ready" } })
        bus.pay(MDBRig.won(4_000)) { results.record($0) }
        #expect(simulator.wait { $0.changer.isPaying })
        let unplugged = ContinuousClock.now
        simulator.unplug()
        #expect(waitFor(.seconds(20)) { !results.all.isEmpty })
        let waited = ContinuousClock.now - unplugged
        let paidByDevice = simulator.with { devices in devices.changer.coinsPaid.reduce(0) { $0 + devices.changer.value(ofType: $1) } }
        let result = try #require(results.all.first)
        #expect(waited >= stall, "given up only after the stall limit (\(waited))")
        #expect(result.paid == MDBRig.won(0))
        #expect(result.unknown == MDBRig.won(2_550), "the chunk in flight")
        #expect(Int64(paidByDevice) <= result.paid.minorUnits + result.unknown.minorUnits, "never credit for what the changer paid")
        await bus.stop()
    }

    @Test func aPortThatIsNotThereIsSaidOnceAndRetried() async throws {
        let path = Self.socketPath()
        let log = MDBEventLog()
        let bus = MDBBus(settings: Self.settings(path), timekeeper: SystemTimekeeper())
        bus.start(lastSequence: { _ in nil }, deliver: log.record)
        #expect(waitFor { !log.faults.isEmpty })
        let simulator = try MDBSocketSimulator(socketPath: path)
        defer { simulator.unplug() }
        #expect(waitFor { log.notices.contains { $0.hasPrefix("MDB interface ready") } })
        #expect(log.faults.filter { $0.hasPrefix("MDB interface: cannot open unix:\(path)") }.count == 1)
        await bus.stop()
    }
}
