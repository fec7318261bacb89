import VendConfig
import VendControl
import VendDrivers
import VendHardware
import VendPOSIX
import VendSettings
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Answers control requests. Changes are allowed to root, to the user vendd runs as, and to
/// members of the configured technician group; what a customer can do at the machine also to the
/// customer group (the display); everyone may look.
enum CommandHandler {
    static func handle(_ request: ControlRequest, peer: UnixSocket.PeerCredentials?, controller: MachineController) -> ControlResponse {
        let config = controller.config
        if let refusal = refusal(
            for: peer, of: request.command, control: config.control,
            serviceKeyOn: { controller.status().serviceKey == true })
        {
            return .failure(refusal)
        }
        switch request.command {
        case .status:
            return .success(status: controller.status())
        case .stock: return .answer(.stock(controller.reports.stock))
        case .purchasable: return .answer(.purchasable(controller.reports.purchasable))
        case .expired(let at):
            return .answer(
                .expired(
                    controller.reports.expired(
                        at: at.map(Instant.init(millisecondsSinceEpoch:))
                            ?? Instant(millisecondsSinceEpoch: controller.timekeeper.wallClockMilliseconds))))
        case .hot: return .answer(.hot(controller.reports.hot))
        case .products: return .answer(.products(controller.reports.products))
        case .history(let since, let limit):
            if let limit, limit < 0 { return .failure(ControlError(.badRequest, "limit \(limit) is negative")) }
            return .answer(.history(controller.reports.history(since: since.map(Instant.init(millisecondsSinceEpoch:)), limit: limit)))
        case .coins: return .answer(.coins(controller.reports.coins))
        case .temps(let zone, let minutes): return temps(zone: zone, minutes: minutes, controller: controller)
        case .dexClearPassCode: return clearDEXPassCode(by: technician(peer), controller: controller)
        case .sales(let since):
            return .answer(.sales(controller.reports.sales(since: since.map(Instant.init(millisecondsSinceEpoch:)), at: controller.requests.now)))
        case .price(let slot, let amount):
            return setPrice(slot, amount, machine: controller.requests)
        case .priceLine(let slot, let amount, let list, let payment):
            return setPrice(slot, amount, list: list, scope: payment, machine: controller.requests)
        case .prices: return .answer(.prices(controller.reports.prices))
        case .fill(let on):
            return fill(on, controller: controller)
        case .payoutTest(let amount, let confirmed):
            return payoutTest(amount, confirmed: confirmed, controller: controller)
        case .cashCollect:
            return collectCash(by: technician(peer), controller: controller)
        case .service(let on):
            if let stays = controller.requests.setServiceModeByTechnician(on) { return .failure(ControlError(.rejected, stays)) }
            return .success(on ? "service mode on: sales stopped" : "service mode off: back in service")
        case .sim(let command):
            return simulate(command, controller: controller)
        case .watch:
            return .failure(ControlError(.badRequest, "watch is answered by the connection, not here"))
        case .select(let slot):
            if let unknown = unknownSlot(slot, config) { return .failure(unknown) }
            return customerInput(.slotSelected(SlotID(slot)), controller: controller)
        case .coinReturn:
            return customerInput(.coinReturnPressed, controller: controller)
        case .slotClear(let slot):
            if let unknown = unknownSlot(slot, config) { return .failure(unknown) }
            return clearSlot(SlotID(slot), by: technician(peer), controller: controller)
        case .restock(let slot, let count, let loadedAt):
            return restock(slot, count: count, loadedAt: loadedAt.map(Instant.init(millisecondsSinceEpoch:)), controller: controller)
        case .unload(let slot, let count):
            if let unknown = unknownSlot(slot, config) { return .failure(unknown) }
            if let count, count < 1 {
                return .failure(ControlError(.badRequest, "unload at least 1 item (or leave the count out to empty the slot)"))
            }
            return unload(SlotID(slot), count: count, controller: controller)
        case .zoneService(let zone):
            return serviceZone(zone, peer: peer, controller: controller)
        }
    }

    /// The technician's clearing of a slot's motor fault, journaled with who cleared it.
    private static func clearSlot(_ slot: SlotID, by technician: String, controller: MachineController) -> ControlResponse {
        for event in controller.sendAndWait(.clearSlotFault(slot, by: technician)).events {
            switch event {
            case .slotFaultCleared(_, let fault, _): return .success("slot \(slot) back in service (\(fault.rawValue) cleared)")
            case .rejected(let reason): return .failure(ControlError(.rejected, reason.describe(controller.config.machine.moneyFormat)))
            default: continue
            }
        }
        return .failure(ControlError(.rejected, "slot \(slot) was not cleared"))
    }

    /// Forgets the DDCMP security and pass code (EVA-DTS 6.1.6): the next handheld's non-zero
    /// code is learnt again. Only in service mode: someone at the machine, as a handheld that
    /// configures checks "whether the door is open at the same time" (§6.1.7, p.179).
    private static func clearDEXPassCode(by technician: String, controller: MachineController) -> ControlResponse {
        guard controller.currentMachine.isInServiceMode else {
            return .failure(
                ControlError(.rejected, "clearing the DEX pass code needs service mode: turn the service key (or vendctl service on) first"))
        }
        guard controller.currentMachine.dex.passCode != nil else { return .success("no DEX pass code is kept: any handheld reads") }
        guard let cleared = controller.requests.request(.setDEXPassCode(nil, by: technician)), cleared.after.machine.dex.passCode == nil else {
            return .failure(
                ControlError(.internal, "the DEX pass code could not be cleared (the journal refused the change); see journalctl -u vendd"))
        }
        return .success("DEX pass code cleared by \(technician): the next DDCMP handheld's non-zero code is learnt")
    }

    /// Who sent a request, for the journal: the user's name, else their uid.
    private static func technician(_ peer: UnixSocket.PeerCredentials?) -> String {
        guard let peer else { return "unknown" }
        guard let user = getpwuid(peer.uid), let name = String(validatingCString: user.pointee.pw_name) else { return "uid \(peer.uid)" }
        return "\(name) (uid \(peer.uid))"
    }

    /// A customer's input, answered with what the machine did about it: the vend that started, the
    /// refund, or why not (the same sentence `vendctl watch` shows).
    private static func customerInput(_ input: Input, controller: MachineController) -> ControlResponse {
        let format = controller.config.machine.moneyFormat
        let events = controller.sendAndWait(input).events
        for event in events {
            switch event {
            case .vendStarted(let vend, let slot, let product, let price):
                return .success("\(vend) started: slot \(slot), \(product) for \(format.string(for: price))")
            case .paidOut(let amount):
                return .success("refund of \(format.string(for: amount))")
            case .payoutStarted(let payout, let amount, _):
                return .success("\(payout): paying \(format.string(for: amount))")
            case .rejected(let reason):
                return .failure(ControlError(.rejected, reason.describe(format)))
            default: continue
            }
        }
        let status = controller.status()
        if status.state == "out-of-order" {
            return .failure(ControlError(.rejected, "the machine is out of order: \(status.stateReason ?? "")"))
        }
        return .success("nothing to do")
    }

    /// An unknown slot is a wrong argument: the answer lists the slots there are.
    static func unknownSlot(_ slot: String, _ config: VenddConfig, orAll: Bool = false) -> ControlError? {
        guard !config.slots.contains(where: { $0.id.rawValue == slot }), !(orAll && slot == "all") else { return nil }
        return ControlError(
            .badRequest, "no slot \(slot) (slots: \(config.slots.map(\.id.rawValue).joined(separator: ", "))\(orAll ? ", or all" : ""))")
    }

    /// `vendctl price`, and each price a DEX handheld or the fleet sends: list 1's price for
    /// every payment unless `list` and `scope` say another line.
    static func setPrice(
        _ slot: String, _ amount: String, list: PriceListNumber = .standardList, scope: PriceScope = .any, machine: MachineRequests
    ) -> ControlResponse {
        let config = machine.view.config
        if let unknown = unknownSlot(slot, config) { return .failure(unknown) }
        var price: Money?
        if amount != "default" {
            do {
                price = try Money(parsing: amount, currency: config.machine.currency)
            } catch {
                return .failure(ControlError(.badRequest, "\(error) (or say default for the configured price)"))
            }
        }
        let line = list == .standardList && scope == .any
        let input: Input = line ? .setPrice(SlotID(slot), price) : .setPriceLine(SlotID(slot), list: list, scope: scope, price: price)
        guard let outcome = machine.request(input) else {
            return .failure(ControlError(.internal, "vendd is stopping: the price is not changed"))
        }
        for event in outcome.effects.events {
            switch event {
            case .priceChanged(_, let from, let to):
                return .success("slot \(slot) price \(config.machine.moneyFormat.string(for: from)) → \(config.machine.moneyFormat.string(for: to))")
            case .priceLineChanged(_, _, _, let from, let to):
                let format = config.machine.moneyFormat
                let none = "no line of its own"
                return .success(
                    "slot \(slot) price on list \(list) for \(scope.rawValue) \(from.map(format.string(for:)) ?? none) → \(to.map(format.string(for:)) ?? none)"
                )
            case .rejected(let reason):
                return .failure(ControlError(.badRequest, reason.describe(config.machine.moneyFormat)))
            default: continue
            }
        }
        guard line else {
            let current =
                outcome.after.machine.runTimeLines(of: SlotID(slot)).first { $0.list == list && $0.scope == scope }?.price
                ?? config.machineSetup.slot(SlotID(slot))?.priceLines.first { $0.list == list && $0.scope == scope }?.price
            return .success(
                "slot \(slot) already has \(current.map(config.machine.moneyFormat.string(for:)) ?? "no price") on list \(list) for \(scope.rawValue)"
            )
        }
        let current = outcome.after.reports.slots.first { $0.id == slot }?.priceText ?? amount
        return .success("slot \(slot) already costs \(current)")
    }

    private static func fill(_ on: Bool, controller: MachineController) -> ControlResponse {
        for event in controller.sendAndWait(.setFillMode(on)).events {
            switch event {
            case .fillModeChanged(true):
                return .success("fill mode on: coins put in now are float for the change stock, not credit (bills are returned)")
            case .fillModeChanged(false): return .success("fill mode off")
            case .rejected(let reason): return .failure(ControlError(.rejected, reason.description))
            default: continue
            }
        }
        return .success(on ? "fill mode was already on" : "fill mode was already off")
    }

    /// The collection is journaled (and its fleet event with it) before the answer.
    private static func collectCash(by technician: String, controller: MachineController) -> ControlResponse {
        guard let outcome = controller.requests.request(.collectCash(by: technician)) else {
            return .failure(ControlError(.internal, "vendd is stopping: nothing was collected; try again once it runs"))
        }
        for event in outcome.effects.events {
            switch event {
            case .cashCollected(let collected):
                let report = outcome.after.reports.collection(collected)
                let since = report.since == nil ? "since vendd began counting" : "since collection #\(collected.number - 1)"
                let counted = (report.coins.map { "coin \($0.valueText) × \($0.count)" } + report.bills.map { "bill \($0.valueText) × \($0.count)" })
                return .collected(
                    "collection #\(collected.number): the cash box took \(report.totalText) \(since)"
                        + (counted.isEmpty ? "" : " (\(counted.joined(separator: ", ")))") + "; its count starts again from zero, the tubes stay",
                    report)
            case .rejected(.notInServiceMode):
                return .failure(
                    ControlError(
                        .rejected,
                        "a collection is made in service mode only: open the door or turn the service key (or vendctl service on), then vendctl cash collect"
                    ))
            case .rejected(let reason): return .failure(ControlError(.rejected, reason.description))
            default: continue
            }
        }
        return .failure(ControlError(.internal, "vendd did not record the collection: see journalctl -u vendd"))
    }

    /// Starts the test; the devices report when it ends (`vendctl cash payout-test` waits for that).
    private static func payoutTest(_ amount: String, confirmed: Bool, controller: MachineController) -> ControlResponse {
        let format = controller.config.machine.moneyFormat
        let value: Money
        do {
            value = try Money(parsing: amount, currency: controller.config.machine.currency)
        } catch {
            return .failure(ControlError(.badRequest, "\(error)"))
        }
        if let refusal = payoutTestRefusal(value, confirmed: confirmed, coins: controller.attachedPayouts?.inventory() ?? [], format: format) {
            return .failure(refusal)
        }
        for event in controller.sendAndWait(.testPayout(value)).events {
            switch event {
            case .payoutStarted(let payout, let amount, _):
                return .success("\(payout): paying \(format.string(for: amount)) (payout test)")
            case .rejected(let reason): return .failure(ControlError(.rejected, reason.describe(format)))
            default: continue
            }
        }
        return .failure(ControlError(.rejected, "the payout test did not start"))
    }

    /// A test amount the coins cannot make (not a multiple of their smallest step: bad request),
    /// or more than the devices hold without `--yes` (it would empty them).
    static func payoutTestRefusal(_ amount: Money, confirmed: Bool, coins: [ChangeStock], format: MoneyFormat) -> ControlError? {
        let payable = coins.filter { $0.count != 0 && $0.value.minorUnits > 0 }
        guard amount.minorUnits > 0, !payable.isEmpty else { return nil }
        let step = payable.map(\.value.minorUnits).reduce(0) { gcd($0, $1) }
        if amount.minorUnits % step != 0 {
            let below = Money(minorUnits: amount.minorUnits / step * step, currency: amount.currency)
            let above = below + Money(minorUnits: step, currency: amount.currency)
            let nearest = below.isZero ? format.string(for: above) : "\(format.string(for: below)) or \(format.string(for: above))"
            let values = payable.map(\.value).sorted().map { format.string(for: $0) }
            return ControlError(
                .badRequest,
                "the payout devices cannot pay \(format.string(for: amount)): their coins (\(values.joined(separator: ", "))) pay multiples of \(format.string(for: Money(minorUnits: step, currency: amount.currency))); try \(nearest)"
            )
        }
        // A device that cannot count its coins (a hopper) leaves what they hold unknown.
        guard !confirmed, payable.allSatisfy({ $0.count != nil }) else { return nil }
        let held = payable.reduce(Money.zero(amount.currency)) { $0 + $1.value * ($1.count ?? 0) }
        guard amount > held else { return nil }
        return ControlError(
            .badRequest,
            "the payout devices hold \(format.string(for: held)): a test of \(format.string(for: amount)) would empty them. Add --yes to pay what they hold, or ask for less"
        )
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? a : gcd(b, a % b) }

    private static func restock(_ slot: String, count: Int?, loadedAt: Instant?, controller: MachineController) -> ControlResponse {
        let config = controller.config
        let slots = slot == "all" ? config.slots.map(\.id) : [SlotID(slot)]
        if let unknown = unknownSlot(slot, config, orAll: true) { return .failure(unknown) }
        var done: [String] = []
        var refused: [String] = []
        for id in slots {
            let effects = controller.sendAndWait(.restock(id, count: count, loadedAt: loadedAt))
            for event in effects.events {
                switch event {
                case .stockChanged(let slot, _, let from, let to, _): done.append("\(slot) \(from)→\(to)")
                case .rejected(let reason) where slot != "all" || count != nil: refused.append(reason.description)
                default: break
                }
            }
        }
        guard refused.isEmpty else { return .failure(ControlError(.rejected, refused.joined(separator: "; "))) }
        return .success(done.isEmpty ? "every slot was already full" : "restocked " + done.joined(separator: ", "))
    }

    /// What left the slot, what of it was discarded as expired, and whether the slot sells again.
    private static func unload(_ slot: SlotID, count: Int?, controller: MachineController) -> ControlResponse {
        let format = controller.config.machine.moneyFormat
        var parts: [String] = []
        for event in controller.sendAndWait(.unload(slot, count: count)).events {
            switch event {
            case .stockChanged(_, _, let from, let to, .unloaded): parts.insert("unloaded \(slot) \(from)→\(to)", at: 0)
            case .expiredStockDiscarded(_, _, let count, let value):
                parts.append("\(count) expired item(s) discarded (\(format.string(for: value)) at the slot's price)")
            case .expiredStockCleared: parts.append("slot \(slot) sells again")
            case .rejected(let reason): return .failure(ControlError(.rejected, reason.describe(format)))
            default: continue
            }
        }
        if controller.currentMachine.expiredSlots[slot] != nil {
            parts.append("slot \(slot) still holds expired items next: unload more")
        }
        return .success(parts.joined(separator: "; "))
    }

    /// Nil when the peer may send `command`. `serviceKeyOn` is asked only when it matters.
    static func refusal(
        for peer: UnixSocket.PeerCredentials?, of command: ControlCommand, control: ControlSettings,
        serviceKeyOn: () -> Bool
    ) -> ControlError? {
        if command.permission == .anyone { return nil }
        guard let peer else { return ControlError(.forbidden, "vendd could not read your credentials") }
        let group = control.group
        if peer.uid == 0 || peer.uid == getuid() || isMember(uid: peer.uid, gid: peer.gid, of: group) { return nil }
        let customer = isMember(uid: peer.uid, gid: peer.gid, of: control.customerGroup)
        switch command.permission {
        case .customer where customer: return nil
        case .serviceKey where customer:
            if serviceKeyOn() { return nil }
            return ControlError(.forbidden, "\(command.op) from the '\(control.customerGroup)' group needs the service key turned on")
        default:
            return ControlError(
                .forbidden,
                "permission denied: changing the machine needs root or membership in the '\(group)' group (ask an administrator: usermod -aG \(group) $USER, then log in again)"
            )
        }
    }

    private static func isMember(uid: uid_t, gid: gid_t, of groupName: String) -> Bool {
        guard let group = getgrnam(groupName) else { return false }
        let groupID = group.pointee.gr_gid
        if gid == groupID { return true }
        guard let user = getpwuid(uid) else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        guard getgrouplist(user.pointee.pw_name, gid, &groups, &count) >= 0 else { return false }
        return groups.prefix(Int(count)).contains(groupID)
    }
}
