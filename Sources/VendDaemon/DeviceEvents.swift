import Logging
import Synchronization
import VendHardware
import VendingCore

/// Turns what the devices report — buttons, the service key and door, coins and bills — into the
/// machine's inputs (sent through its inbox, never waiting) and notices. The key and the door are
/// sent as switch positions: the machine's lane composes them with the technician's into service
/// mode, in the order they moved.
final class DeviceEvents: Sendable {
    private let logger: Logger
    private let notices: HardwareNotices
    /// Door switch changes handled so far (the switch sent to the machine, the zones told): what a
    /// simulated door waits for before it answers.
    private let doorChanges = Atomic(0)
    /// Set once, by the controller that owns this.
    private let machine = Mutex<MachineController?>(nil)

    init(logger: Logger, notices: HardwareNotices) {
        self.logger = logger
        self.notices = notices
    }

    func connect(to controller: MachineController) {
        machine.withLock { $0 = controller }
    }

    /// How many door switch changes have been handled.
    var doorChangesHandled: Int { doorChanges.load(ordering: .acquiring) }

    private func send(_ input: Input) {
        machine.withLock { $0 }?.send(input)
    }

    func handle(_ event: PanelEvent) {
        switch event {
        case .slotButtonPressed(let slot): send(.slotSelected(slot))
        case .coinReturnPressed: send(.coinReturnPressed)
        case .serviceKey(let on): machine.withLock { $0 }?.moveSwitch(.serviceKey, on: on)
        case .door(let open):
            logger.notice(open ? "door opened" : "door closed")
            machine.withLock { $0 }?.moveSwitch(.door, on: open)
            // The temperature zones share the cabinet door: open, the cabinet warms; closed, the
            // zones get their recovery window before their health rule may trip.
            machine.withLock { $0 }?.climate.withLock { $0 }?.setDoor(open: open)
            doorChanges.add(1, ordering: .releasing)
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
