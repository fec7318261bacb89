import Logging
import VendHardware
import VendingCore

/// When hardware is attached: resolves a payout that was in flight when vendd stopped from what
/// the devices report (never by paying again), or records their counters; then what they can
/// pay. Until the devices have judged (an MDB changer once it has read its tubes), the payout
/// stays pending: no coins, no sales, no other payout.
struct InterruptedPayoutTakeover {
    let controller: MachineController
    let bank: PayoutBank

    func run() {
        let machine = controller.currentMachine
        guard let pending = machine.pendingPayout else {
            controller.sendAndWait(.payoutCountersSynchronised(bank.counters()))
            controller.sendAndWait(.changeInventory(bank.inventory()))
            return
        }
        controller.logger.notice(
            "\(pending.id) was in flight when vendd stopped: asking the payout devices what they paid of it",
            metadata: ["PAYOUT": "\(pending.id.rawValue)"])
        let (controller, bank) = (controller, bank)
        bank.resolveInterrupted(pending.amount, counters: machine.payoutCounters, asked: pending.askedDevices, holdings: pending.holdings) {
            resolution in
            // Hardware replaced meanwhile (a reload): the new bank resolves it.
            guard controller.attachedPayouts === bank else { return }
            Self.log(resolution, of: pending, controller: controller)
            let result = resolution.result
            controller.send(
                .payoutEnded(pending.id, paid: result.paid, unknown: result.unknown, counters: result.counters, inventory: bank.inventory()))
        }
    }

    private static func log(_ resolution: PayoutBank.Resolution, of pending: PendingPayout, controller: MachineController) {
        let format = controller.config.machine.moneyFormat
        let result = resolution.result
        let rest = pending.amount - result.paid - result.unknown
        let devices = resolution.findings.map { finding in
            "\(finding.device): \(format.string(for: finding.part.paid)) paid\(finding.part.cannotTell.map { ", cannot tell the rest: \($0)" } ?? "")"
        }
        let text =
            "\(pending.id) of \(format.string(for: pending.amount)) was in flight when vendd stopped; the payout devices report \(format.string(for: result.paid)) paid\(result.unknown.isZero ? "" : ", \(format.string(for: result.unknown)) unknown"), \(format.string(for: rest)) back to credit; it is not paid again"
            + (devices.isEmpty ? " (no device was asked)" : " (\(devices.joined(separator: "; ")))")
        // The payout-ended event that follows says it again, at `crit` when some is unknown.
        controller.logger.warning(
            "\(text)",
            metadata: [
                "PAYOUT": "\(pending.id.rawValue)", "AMOUNT": "\(pending.amount.decimalString)",
                "PAID": "\(result.paid.decimalString)", "UNKNOWN": "\(result.unknown.decimalString)",
                "UNPAID": "\(rest.decimalString)",
            ])
    }
}
