import Logging
import VendHardware
import VendingCore

/// Turns what the devices report — buttons, the service key and door, coins and bills — into the
/// machine's inputs (handed over, never waiting) and notices. The key and the door are sent as
/// switch positions: the machine's lane composes them with the technician's into service mode,
/// and tells the zones about the door, in the order they moved.
final class DeviceEvents: Sendable {
    private let logger: Logger
    private let notices: HardwareNotices
    private let machine: MachineInputs

    init(logger: Logger, notices: HardwareNotices, machine: MachineInputs) {
        self.logger = logger
        self.notices = notices
        self.machine = machine
    }

    private func send(_ input: Input) { machine.send(input) }

    func handle(_ event: PanelEvent) {
        switch event {
        case .slotButtonPressed(let slot): send(.slotSelected(slot))
        case .coinReturnPressed: send(.coinReturnPressed)
        case .serviceKey(let on): machine.moveSwitch(.serviceKey, on: on)
        case .door(let open):
            logger.notice(open ? "door opened" : "door closed")
            machine.moveSwitch(.door, on: open)
        case .dropSensed:
            // Drop sensors belong to the dispenser; `Hardware` routes them there.
            break
        }
    }

    func handle(_ event: CoinAcceptorEvent) {
        switch event {
        case .accepted(let coin):
            logger.info(
                "coin accepted on channel \(coin.channel)",
                metadata: ["COIN_CHANNEL": "\(coin.channel)", "AMOUNT": "\(coin.value.decimalString)"])
            send(.coinInserted(value: coin.value, event: coin.event, route: coin.route))
        case .billStacked(let value, let event):
            logger.info("bill stacked", metadata: ["AMOUNT": "\(value.decimalString)"])
            send(.billStacked(value: value, event: event))
        case .synchronised(let event):
            send(.coinSourceSynchronised(event))
        case .dispensedManually(let amount):
            send(.coinsDispensedManually(amount))
        case .notice(let text, let isFault):
            notices.post(.coinAcceptor(text, isFault: isFault))
        case .deviceNotice(let text, let isFault):
            notices.post(.paymentDevice(text, isFault: isFault))
        }
    }
}
