import Logging
import VendHardware
import VendingCore

/// The one route from the devices to the machine: every driver of one `Hardware` hands its
/// `DeviceReport`s here, on the thread that read them, and goes on. A press, a coin, a bill or a
/// card report becomes the machine's input, journaled on its lane before anything acts on it; the
/// key and the door are switch positions the lane composes with the technician's into service
/// mode (and tells the zones of the door), in the order they moved; a failure puts the machine
/// out of order in input order; notices go to the log lane. A drop goes straight to the
/// dispenser's open window, on the relay timers, never behind the machine's journal: the machine
/// hears of it as the vend's outcome.
final class DeviceReportRoute: Sendable {
    private let logger: Logger
    private let notices: HardwareNotices
    private let machine: MachineInputs
    private let dispenser: Dispenser

    init(logger: Logger, notices: HardwareNotices, machine: MachineInputs, dispenser: Dispenser) {
        self.logger = logger
        self.notices = notices
        self.machine = machine
        self.dispenser = dispenser
    }

    func report(_ report: DeviceReport) {
        switch report {
        case .panel(let event): panel(event)
        case .cash(let event): cash(event)
        case .card(let input): machine.send(input)
        case .changeInventory(let inventory): machine.send(.changeInventory(inventory))
        case .failed(let reason): machine.hardwareFailed(reason)
        }
    }

    private func panel(_ event: PanelEvent) {
        switch event {
        case .slotButtonPressed(let slot): machine.send(.slotSelected(slot))
        case .coinReturnPressed: machine.send(.coinReturnPressed)
        case .ageVerified: machine.send(.ageVerified)
        case .serviceKey(let on): machine.moveSwitch(.serviceKey, on: on)
        case .door(let open):
            logger.notice(open ? "door opened" : "door closed")
            machine.moveSwitch(.door, on: open)
        case .dropSensed(let line, let instant): dispenser.dropSensed(on: line, at: instant)
        }
    }

    private func cash(_ event: CoinAcceptorEvent) {
        switch event {
        case .accepted(let coin):
            logger.info(
                "coin accepted on channel \(coin.channel)",
                metadata: ["COIN_CHANNEL": "\(coin.channel)", "AMOUNT": "\(coin.value.decimalString)"])
            machine.send(.coinInserted(value: coin.value, event: coin.event, route: coin.route))
        case .billStacked(let value, let event):
            logger.info("bill stacked", metadata: ["AMOUNT": "\(value.decimalString)"])
            machine.send(.billStacked(value: value, event: event))
        case .synchronised(let event):
            machine.send(.coinSourceSynchronised(event))
        case .dispensedManually(let amount):
            machine.send(.coinsDispensedManually(amount))
        case .notice(let text, let isFault):
            notices.post(.coinAcceptor(text, isFault: isFault))
        case .deviceNotice(let text, let isFault):
            notices.post(.paymentDevice(text, isFault: isFault))
        }
    }
}
