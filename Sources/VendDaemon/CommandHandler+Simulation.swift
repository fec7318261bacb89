import VendConfig
import VendControl
import VendHardware
import VendSettings
import VendingCore

/// `vendctl sim …`: what a customer, the bank or the cabinet does to the simulated devices of
/// `vendd --simulate` (a production vendd answers `not-simulated`). A coin goes to the simulated
/// coin acceptor when it has an enabled channel for it, else to the simulated MDB changer; notes
/// go to the MDB bill validator, cards to a reader. Each answers once the machine has dealt with
/// what the device reported, so an answer means the money is journaled.
extension CommandHandler {
    static func simulate(_ command: SimCommand, controller: MachineController) -> ControlResponse {
        let config = controller.config
        switch command {
        case .press(let slot):
            if let unknown = unknownSlot(slot, config) { return .failure(unknown) }
            return simulate(controller) { world throws(SimulatedWorld.CommandError) in
                try world.press(SlotID(slot))
                return "pressed the button of slot \(slot)"
            }
        case .coinReturn:
            return simulate(controller) { world throws(SimulatedWorld.CommandError) in
                try world.press(ButtonAction.coinReturn)
                return "pressed coin return"
            }
        case .verifyAge:
            guard let verification = controller.config.ageVerification else {
                return .failure(ControlError(.badRequest, "this configuration has no age_verification: section"))
            }
            // The reader checks: an adult shows an ID there.
            if let reader = verification.reader { return simulateCard(reader.rawValue, .showID(age: 99), controller: controller) }
            return simulate(controller) { world throws(SimulatedWorld.CommandError) in
                try world.press(ButtonAction.ageVerified)
                return "signalled the age verifier"
            }
        case .key(let on):
            let turned = simulate(controller) { world throws(SimulatedWorld.CommandError) in
                try world.set(ButtonAction.serviceMode, active: on)
                return on ? "turned the service key on" : "turned the service key off"
            }
            // Answered once the machine has applied it: a `status` right after says so.
            guard turned.ok, !waitForServiceKey(on, controller: controller, limit: .seconds(3)) else { return turned }
            return .failure(
                ControlError(
                    .internal,
                    "the simulated service key was turned \(on ? "on" : "off") but vendd did not see it within 3 s: see journalctl -u vendd"))
        case .drop(let slot, let succeeds):
            if let unknown = unknownSlot(slot, config) { return .failure(unknown) }
            return simulate(controller) { world throws(SimulatedWorld.CommandError) in
                try world.setDrop(SlotID(slot), succeeds: succeeds)
                return succeeds ? "the next vend from slot \(slot) drops its item" : "the next vend from slot \(slot) drops nothing"
            }
        case .motor(let slot, let action):
            if let unknown = unknownSlot(slot, config) { return .failure(unknown) }
            guard let fault = SimulatedMotorFault(rawValue: action) else {
                let known = SimulatedMotorFault.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(ControlError(.badRequest, "unknown motor action '\(action)' (known: \(known))"))
            }
            return simulate(controller) { world throws(SimulatedWorld.CommandError) in
                try world.setMotor(SlotID(slot), fault)
                return switch fault {
                case .jam: "the next turn of slot \(slot)'s motor jams away from home"
                case .missing: "slot \(slot)'s motor is missing for its next turn"
                case .free: "slot \(slot)'s spiral is free and its cam at home"
                }
            }
        case .coin(let amount): return simulateCoin(amount, controller: controller)
        case .note(let amount): return simulateNote(amount, controller: controller)
        case .card(let reader, let action): return simulateCard(reader, action, controller: controller)
        case .door(let open): return simulateDoor(open: open, controller: controller)
        case .temp(let zone, let value): return simulateTemperature(zone: zone, value: value, controller: controller)
        case .sensorFault(let zone, let fault): return simulateSensorFault(zone: zone, fault: fault, controller: controller)
        }
    }

    static let notSimulated = ControlResponse.failure(
        ControlError(
            .notSimulated, "vendd runs on real hardware; sim commands need `vendd run --simulate`"))

    private static func simulate(
        _ controller: MachineController,
        _ action: (SimulatedWorld) throws(SimulatedWorld.CommandError) -> String
    ) -> ControlResponse {
        guard let world = controller.simulatedWorld else { return notSimulated }
        do {
            return .success(try action(world))
        } catch {
            return .failure(ControlError(.rejected, error.description))
        }
    }

    /// Waits until the service key's switch reads `on` (it is debounced like a real one) and the
    /// machine's service mode follows the switches, and the input's effects are carried out.
    /// False after `limit`.
    private static func waitForServiceKey(_ on: Bool, controller: MachineController, limit: Duration) -> Bool {
        let seen = controller.waitForView(within: limit) { view in
            view.switches.serviceKeyOn == on && view.machine.isInServiceMode == view.switches.isOn
        }
        if seen { controller.settle() }
        return seen
    }

    private static func simulateCoin(_ amount: String, controller: MachineController) -> ControlResponse {
        let config = controller.config, format = config.machine.moneyFormat
        let value: Money
        do throws(Answered) {
            value = try money(amount, config)
        } catch {
            return error.response
        }
        guard let world = controller.simulatedWorld else { return notSimulated }
        let acceptorTakes = config.coinAcceptor?.channels.contains { $0.value == value && $0.enabled } ?? false
        if !acceptorTakes, let mdb = controller.simulatedMDB, config.mdb?.changer != nil {
            let coin = "coin of \(format.string(for: value))"
            do {
                let routing = try mdb.insertCoin(value, format: format)
                controller.settle()
                switch routing {
                case .tubes: return .success("\(coin) accepted by the coin changer (into its tube)")
                case .cashBox: return .success("\(coin) accepted by the coin changer (into the cash box)")
                case .rejected, .notUsed:
                    let why = disabled(value, in: config.mdb?.changer?.coins, config) ?? "the coin changer does not take coins now"
                    return .failure(ControlError(.rejected, "\(coin) returned: \(why)"))
                }
            } catch {
                return .failure(ControlError(error.code, "\(error)\(noteHint(value, amount, config))"))
            }
        }
        // The simulated acceptor delivers on this thread, into the machine's inbox; once the
        // inbox has settled the coin is journaled and credited, so an answer means it is safe.
        let outcome = world.coinAcceptor.insert(value)
        controller.settle()
        switch outcome {
        case .accepted(let coin):
            return .success("coin of \(format.string(for: value)) accepted on channel \(coin.channel)")
        case .returned(let reason):
            // No enabled channel takes it, and a channel for it says `enabled: false`: say so.
            let channel = acceptorTakes ? nil : config.coinAcceptor?.channels.first { $0.value == value && !$0.enabled }
            let why = channel.map {
                "\($0.origin.path) is `enabled: false` in \($0.origin.location.file) (line \($0.origin.location.line)): the acceptor takes no such coin until the file enables it"
            }
            // No coin of the machine is worth it: a wrong argument, not a refusal.
            let unknown = !(config.coinAcceptor?.channels.contains { $0.value == value } ?? false)
            return .failure(ControlError(unknown ? .badRequest : .rejected, "coin returned: \(why ?? reason)\(noteHint(value, amount, config))"))
        }
    }

    private static func simulateNote(_ amount: String, controller: MachineController) -> ControlResponse {
        let format = controller.config.machine.moneyFormat
        do throws(Answered) {
            let value = try money(amount, controller.config)
            let mdb = try inProcessMDB(controller)
            let (stacked, reason) = try refusedIfThrows { () throws(InProcessMDB.Refusal) in try mdb.insertNote(value, format: format) }
            controller.settle()
            let note = "note of \(format.string(for: value))"
            let why = disabled(value, in: controller.config.mdb?.billValidator?.bills, controller.config) ?? reason ?? ""
            return stacked ? .success("\(note) stacked") : .failure(ControlError(.rejected, "\(note) returned: \(why)"))
        } catch {
            return error.response
        }
    }

    private static func simulateCard(_ number: Int, _ action: SimulatedCardAction, controller: MachineController) -> ControlResponse {
        do throws(Answered) {
            guard let reader = CardReader(rawValue: number) else {
                throw Answered(.failure(ControlError(.badRequest, "card reader \(number): readers are 1 (10h) and 2 (60h)")))
            }
            var funds: Money?
            if case .tap(let text?) = action { funds = try money(text, controller.config) }
            let mdb = try inProcessMDB(controller)
            let format = controller.config.machine.moneyFormat
            return .success(try refusedIfThrows { () throws(InProcessMDB.Refusal) in try mdb.card(reader, action, funds: funds, format: format) })
        } catch {
            return error.response
        }
    }

    /// A sim request answered before (or instead of) reaching a device.
    private struct Answered: Error {
        let response: ControlResponse
        init(_ response: ControlResponse) { self.response = response }
    }

    private static func money(_ text: String, _ config: VenddConfig) throws(Answered) -> Money {
        do {
            return try Money(parsing: text, currency: config.machine.currency)
        } catch {
            throw Answered(.failure(ControlError(.badRequest, "\(error)")))
        }
    }

    /// The in-process MDB devices, or why a request for them cannot be served.
    private static func inProcessMDB(_ controller: MachineController) throws(Answered) -> InProcessMDB {
        guard controller.simulatedWorld != nil else { throw Answered(notSimulated) }
        guard let mdb = controller.simulatedMDB else {
            guard let port = controller.config.mdb?.port else {
                throw Answered(.failure(ControlError(.rejected, "the configuration has no mdb: section")))
            }
            throw Answered(
                .failure(ControlError(.rejected, "the MDB bus is on \(port), not simulated in vendd: drive the simulator there (mdb-sim)")))
        }
        return mdb
    }

    /// A device's refusal, as the answer.
    private static func refusedIfThrows<T>(_ body: () throws(InProcessMDB.Refusal) -> T) throws(Answered) -> T {
        do {
            return try body()
        } catch {
            throw Answered(.failure(ControlError(error.code, error.description)))
        }
    }

    /// Why a device refuses a value its table lists: the row says `enabled: false` (nil when no
    /// such row, or an enabled one, exists).
    private static func disabled(_ value: Money, in table: [MDBDenomination]?, _ config: VenddConfig) -> String? {
        guard let table, !table.contains(where: { $0.value == value && $0.enabled }), let row = table.first(where: { $0.value == value }) else {
            return nil
        }
        let device = row.origin.path.hasPrefix("mdb.bill_validator") ? "the bill validator" : "the coin changer"
        return
            "\(row.origin.path) is `enabled: false` in \(row.origin.location.file) (line \(row.origin.location.line)): \(device) takes none until the file enables it"
    }

    /// Points at `sim note` when the value is one of the validator's notes.
    private static func noteHint(_ value: Money, _ amount: String, _ config: VenddConfig) -> String {
        config.mdb?.billValidator?.bills.contains { $0.value == value } == true ? "; it is a note: vendctl sim note \(amount)" : ""
    }
}
