import Synchronization
import VendConfig
import VendGPIO
import VendHardware
import VendSettings
import VendTime
import VendingCore

/// The machine's hardware for one configuration: inputs, relays, coin acceptor. Torn down as a
/// whole on reload and at stop.
final class Hardware: Sendable {
    let panel: InputPanel
    let dispenser: Dispenser
    let coinAcceptor: any CoinAcceptor
    /// The payout devices, largest coin first; nil unless the payout policy is `change`.
    let payouts: PayoutBank?
    /// Present in simulation: what `vendctl sim …` drives.
    let world: SimulatedWorld?
    let gpioDescription: String
    let coinAcceptorDescription: String
    /// The MDB bus, when configured (its coins and bills arrive through `coinAcceptor`).
    let mdb: MDBCashDevices?

    private init(panel: InputPanel, dispenser: Dispenser, coinAcceptor: any CoinAcceptor, payouts: PayoutBank?,
                 world: SimulatedWorld?, gpioDescription: String, coinAcceptorDescription: String, mdb: MDBCashDevices?) {
        self.mdb = mdb
        self.panel = panel
        self.dispenser = dispenser
        self.coinAcceptor = coinAcceptor
        self.payouts = payouts
        self.world = world
        self.gpioDescription = gpioDescription
        self.coinAcceptorDescription = coinAcceptorDescription
    }

    /// Simulated hardware: the same panel, dispenser and debounce code over an in-memory chip.
    /// A coin acceptor on a `unix:` port still gets its real driver (see `coinAcceptor`).
    static func simulated(_ config: VenddConfig, stateDirectory: String, timekeeper: any Timekeeper,
                          notify: @escaping HardwareNoticeHandler) throws(HardwareError) -> Hardware {
        let world = SimulatedWorld(slots: config.slots, buttons: config.buttons,
                                   coinChannels: config.coinAcceptor?.channels ?? [], timekeeper: timekeeper)
        let dispenser: Dispenser, panel: InputPanel
        do {
            (dispenser, panel) = try requestLines(on: world.chip, config: config, timekeeper: timekeeper, notify: notify)
        } catch {
            throw .gpio(error)
        }
        let (acceptor, coins) = coinAcceptor(config, real: false, timekeeper: timekeeper) ?? (world.coinAcceptor,
            config.coinAcceptor.map { "simulated \($0.protocol.rawValue) acceptor (\($0.channels.count) channels)" } ?? "none configured")
        // A hopper with a `unix:` port of its own gets its real driver, as the coin acceptor does.
        let hoppers: [(PayoutDeviceConfig, any PayoutDevice)]
        do {
            hoppers = try config.payoutDevices.map { device throws(HardwareError) in
                if let port = device.port, port.hasPrefix("unix:") {
                    return (device, try ccTalkHopper(device, port: port, timekeeper: timekeeper))
                }
                return (device, SimulatedHopper(coin: device.coin, identity: "simulated-hopper@\(device.address)",
                                                coins: SimulatedHopper.initialCoins,
                                                memoryFile: "\(stateDirectory)/simulated-hopper-\(device.address).txt",
                                                timekeeper: timekeeper))
            }
        } catch {
            dispenser.releaseAll()
            panel.release()
            throw error
        }
        // MDB has no in-memory simulation: only a `unix:` port (mdb-sim, a bridge) is used here.
        let mdb = config.mdb.flatMap { $0.port.hasPrefix("unix:") ? MDBCashDevices(settings: $0, timekeeper: timekeeper) : nil }
        return Hardware(panel: panel, dispenser: dispenser, coinAcceptor: joined(acceptor, mdb),
                        payouts: payoutBank(config, hoppers, then: changerPayout(config, mdb), timekeeper: timekeeper), world: world,
                        gpioDescription: "simulated (\(Set(config.lines.map(\.line)).count) lines)",
                        coinAcceptorDescription: describe(coins, config, mdb), mdb: mdb)
    }

    /// The machine's own GPIO chip through libgpiod, and the configured coin acceptor's driver.
    static func real(_ config: VenddConfig, timekeeper: any Timekeeper,
                     notify: @escaping HardwareNoticeHandler) throws(HardwareError) -> Hardware {
        var hoppers: [(PayoutDeviceConfig, any PayoutDevice)] = []
        for device in config.payoutDevices {
            guard let port = device.port else {
                throw .unsupported("\(device.origin.path) (\(device.origin.location)): a hopper on the coin acceptor's bus is not supported by this version of vendd; give it a port of its own")
            }
            hoppers.append((device, try ccTalkHopper(device, port: port, timekeeper: timekeeper)))
        }
        let chip: LibgpiodChip
        do {
            chip = try LibgpiodChip(config.gpio.chip)
            try chip.checkDistinct(config.lines)
        } catch {
            throw .gpio(error)
        }
        let dispenser: Dispenser, panel: InputPanel
        do {
            (dispenser, panel) = try requestLines(on: chip, config: config, timekeeper: timekeeper, notify: notify)
        } catch {
            throw .gpio(error)
        }
        let debounce = panel.isDebouncedByBackend ? "kernel debounce" : "software debounce"
        let (acceptor, coins) = coinAcceptor(config, real: true, timekeeper: timekeeper) ?? (NoCoinAcceptor(), "none configured")
        let mdb = config.mdb.map { MDBCashDevices(settings: $0, timekeeper: timekeeper) }
        return Hardware(panel: panel, dispenser: dispenser, coinAcceptor: joined(config.coinAcceptor == nil ? nil : acceptor, mdb),
                        payouts: payoutBank(config, hoppers, then: changerPayout(config, mdb), timekeeper: timekeeper), world: nil,
                        gpioDescription: "\(chip.name) [\(chip.label)] via \(LibgpiodChip.libraryDescription), \(debounce)",
                        coinAcceptorDescription: describe(coins, config, mdb), mdb: mdb)
    }

    /// The configured acceptor's real driver when wanted. A `unix:` port is always real, even in
    /// simulation: a ccTalk simulator or a serial bridge listens there.
    static func coinAcceptor(_ config: VenddConfig, real: Bool, timekeeper: any Timekeeper) -> (any CoinAcceptor, String)? {
        guard let coins = config.coinAcceptor, real || coins.port.hasPrefix("unix:") else { return nil }
        return (CoinAcceptorFactory.make(coins, timekeeper: timekeeper), CoinAcceptorFactory.describe(coins))
    }

    /// The payout devices as one queue: the hoppers, the largest coin asked first, then the MDB
    /// changer (which holds every value).
    private static func payoutBank(_ config: VenddConfig, _ hoppers: [(PayoutDeviceConfig, any PayoutDevice)],
                                   then others: [any PayoutDevice], timekeeper: any Timekeeper) -> PayoutBank? {
        let devices = hoppers.sorted { $0.0.coin > $1.0.coin }.map(\.1) + others
        guard config.machine.payout == .change, !devices.isEmpty else { return nil }
        return PayoutBank(devices: devices, timekeeper: timekeeper)
    }

    /// A ccTalk hopper on its own port, identified now: one that cannot be used stops start-up.
    private static func ccTalkHopper(_ device: PayoutDeviceConfig, port: String,
                                     timekeeper: any Timekeeper) throws(HardwareError) -> CcTalkHopper {
        do {
            return try CcTalkHopper.connect(coin: device.coin, address: device.address, port: port, baudRate: 9_600,
                                            timekeeper: timekeeper).0
        } catch {
            throw .unsupported("\(device.origin.path) (\(device.origin.location)): the ccTalk hopper at address \(device.address) on \(port) cannot be used: \(error)")
        }
    }

    /// The MDB changer as a payout device, when there is one.
    private static func changerPayout(_ config: VenddConfig, _ mdb: MDBCashDevices?) -> [any PayoutDevice] {
        guard let mdb, config.mdb?.changer != nil else { return [] }
        return [MDBChangerPayout(bus: mdb.bus)]
    }

    /// The coin acceptor and the MDB bus as one source of coins and bills.
    private static func joined(_ acceptor: (any CoinAcceptor)?, _ mdb: MDBCashDevices?) -> any CoinAcceptor {
        switch (acceptor, mdb) {
        case (let acceptor?, let mdb?): CoinAcceptorGroup([acceptor, mdb])
        case (let acceptor?, nil): acceptor
        case (nil, let mdb?): mdb
        case (nil, nil): NoCoinAcceptor()
        }
    }

    private static func describe(_ coins: String, _ config: VenddConfig, _ mdb: MDBCashDevices?) -> String {
        guard let settings = config.mdb, mdb != nil else { return coins }
        let mdbText = MDBCashDevices.describe(settings)
        return config.coinAcceptor == nil ? mdbText : "\(coins); \(mdbText)"
    }

    /// Relays first, so that every output is requested inactive before any input can act.
    private static func requestLines(on chip: any GPIOChipBackend, config: VenddConfig, timekeeper: any Timekeeper,
                                     notify: @escaping HardwareNoticeHandler) throws(GPIOError) -> (Dispenser, InputPanel) {
        let dispenser = try Dispenser(chip: chip, slots: config.slots, timekeeper: timekeeper, notify: notify)
        do {
            return (dispenser, try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons, timekeeper: timekeeper))
        } catch {
            dispenser.releaseAll()
            throw error
        }
    }

    /// Routes the inputs, with no task or stream between them and the machine: a debounced press
    /// or a coin reaches the controller on the thread that read it; a drop goes straight to the
    /// dispenser's open window, and only the vend's outcome reaches the machine.
    func start(routingTo controller: MachineController, lastSequence: @escaping @Sendable (String) -> UInt64?) {
        let dispenser = dispenser
        mdb?.decideEscrow { controller.acceptsBill($0) }
        mdb?.onInventoryChange { controller.changeInventoryChanged() }
        coinAcceptor.start(lastSequence: lastSequence, deliver: { controller.handle($0) })
        panel.start({ event in
            if case .dropSensed(let line, let instant) = event {
                dispenser.dropSensed(on: line, at: instant)
            } else {
                controller.handle(event)
            }
        }, lost: {
            controller.hardwareFailed("the GPIO inputs stopped delivering events (chip removed or driver error)")
        })
    }

    /// Coins inhibited, every relay off, lines released.
    func shutDown() async {
        payouts?.emergencyStop()
        coinAcceptor.setAcceptance(false)
        await coinAcceptor.stop()
        dispenser.releaseAll()
        panel.release()
    }
}

/// Why the configured hardware cannot be brought up.
enum HardwareError: Error, CustomStringConvertible {
    case gpio(GPIOError)
    case unsupported(String)

    var description: String {
        switch self {
        case .gpio(let error): "\(error)"
        case .unsupported(let reason): reason
        }
    }
}
