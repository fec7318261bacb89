import Synchronization
import Testing
import VendConfig
import VendHardware
import VendTime
import VendingCore

@testable import VendDaemon

/// A coin acceptor that answers on its caller's stack: enabling it hands over the coin held in
/// its throat at once. Before the inbox, this called back into the machine's lock and deadlocked.
final class EagerAcceptor: CoinAcceptor {
    private let report = Mutex<DeviceReportHandler?>(nil)
    private let coins = Mutex<UInt64>(0)
    private let coin: Money

    init(coin: Money) { self.coin = coin }

    func start(lastSequence: @escaping @Sendable (String) -> UInt64?, report: @escaping DeviceReportHandler) {
        self.report.withLock { $0 = report }
    }

    func setAcceptance(_ enabled: Bool) {
        guard enabled, let report = report.withLock({ $0 }) else { return }
        let sequence = coins.withLock { count in
            count += 1
            return count
        }
        report(.cash(.accepted(AcceptedCoin(channel: 1, value: coin, event: CoinEventID(source: "eager", sequence: sequence)))))
    }

    func stop() async {}
}

/// A payout device that pays, and says so, on its caller's stack.
final class InstantPayoutDevice: PayoutDevice {
    var description: String { "instant payout device" }
    var identity: String { "instant" }
    func inventory() -> [ChangeStock] { [] }
    func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void) {
        completion(PayoutDeviceResult(.ended(amount, paid: amount), counter: nil))
    }
    func lastPayout() -> LastPayoutReport {
        LastPayoutReport(
            counter: nil, paid: .zero(ChangeGivingSample.won(0).currency), unpaid: .zero(ChangeGivingSample.won(0).currency), isUnknown: false)
    }
    func emergencyStop() {}
}

/// The machine's inbox: devices that call back at once, from any thread, only queue inputs.
@Suite(.timeLimit(.minutes(5))) struct InboxTests {
    @Test func devicesThatAnswerOnTheCallersStackWork() async throws {
        let rig = try ControllerRig(edit: ChangeGivingSample.edit) { hardware, time in
            Hardware(
                panel: hardware.panel, dispenser: hardware.dispenser, coinAcceptor: EagerAcceptor(coin: ChangeGivingSample.won(500)),
                payouts: PayoutBank(devices: [InstantPayoutDevice()], timekeeper: time), world: hardware.world,
                gpioDescription: hardware.gpioDescription, coinAcceptorDescription: "eager", mdb: nil, hopperLinks: [])
        }
        // Restocking enables coins: the acceptor answers with a coin while the machine carries
        // out that very effect.
        rig.controller.sendAndWait(.restock("A1", count: nil, loadedAt: nil))
        rig.controller.settle()
        #expect(rig.controller.currentMachine.credit == ChangeGivingSample.won(500))
        // Coin return: the device pays on the bank's stack and reports at once.
        rig.controller.sendAndWait(.coinReturnPressed)
        rig.advance(by: .milliseconds(50))
        let machine = rig.controller.currentMachine
        #expect(machine.pendingPayout == nil)
        #expect(machine.ledger.refunds == ChangeGivingSample.won(500))
        #expect(machine.credit == ChangeGivingSample.won(500), "enabled again after the payout, the acceptor hands over its next coin")
        #expect(machine.integrityProblems.isEmpty)
        await rig.tearDown()
    }

    /// Inputs sent from several threads at once are each carried out once, in each sender's
    /// order: a coin numbered before another of the same source is never seen after it (it
    /// would be ignored as a duplicate, and the credit would fall short).
    @Test func inputsSentFromManyThreadsAreCarriedOutOnceInEachSendersOrder() async throws {
        let rig = try ControllerRig()
        let controller = rig.controller
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<4 {
                group.addTask {
                    for sequence in 1...250 {
                        controller.send(
                            .coinInserted(
                                value: ChangeGivingSample.won(10), event: CoinEventID(source: "sender\(sender)", sequence: UInt64(sequence))))
                    }
                }
            }
        }
        controller.settle()
        let machine = controller.currentMachine
        #expect(machine.credit == ChangeGivingSample.won(10_000))
        #expect((0..<4).allSatisfy { machine.lastCoinSequence(from: "sender\($0)") == 250 })
        await rig.tearDown()
    }
}
