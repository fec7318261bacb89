import Synchronization
import VendConfig
import VendDrivers
import VendGPIO
import VendHardware
import VendPOSIX
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
    /// The card readers the machine drives; today only MDB has them.
    var cardReaders: (any CardReaders)? { mdb?.bus }
    /// In simulation, the MDB devices behind the bus, unless the configured port is a `unix:`
    /// socket (a simulator or bridge listens there).
    let simulatedMDB: InProcessMDB?
    /// The ports only hoppers are on (the coin acceptor's driver closes its own bus).
    private let hopperLinks: [CcTalkLink]
    /// In simulation with `--line-log`: the lines' changes, closed last at shutdown.
    private let lineLog: LineChangeLog?

    /// The parts as `simulated` and `real` assemble them (a test may swap a device).
    init(
        panel: InputPanel, dispenser: Dispenser, coinAcceptor: any CoinAcceptor, payouts: PayoutBank?,
        world: SimulatedWorld?, gpioDescription: String, coinAcceptorDescription: String, mdb: MDBCashDevices?,
        simulatedMDB: InProcessMDB? = nil, hopperLinks: [CcTalkLink], lineLog: LineChangeLog? = nil
    ) {
        self.lineLog = lineLog
        self.mdb = mdb
        self.simulatedMDB = simulatedMDB
        self.hopperLinks = hopperLinks
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
    /// `lineLogPath`: the file `LineChangeLog` appends every line change to.
    static func simulated(
        _ config: VenddConfig, stateDirectory: String, lineLogPath: String? = nil, timekeeper: any Timekeeper,
        relayTimers: any Timekeeper, notify: @escaping HardwareNoticeHandler
    ) throws(HardwareError) -> Hardware {
        var lineLog: LineChangeLog?
        if let lineLogPath {
            do {
                lineLog = try LineChangeLog(path: lineLogPath)
            } catch {
                throw .lineLog(error)
            }
        }
        do {
            return try assembleSimulated(
                config, stateDirectory: stateDirectory, lineLog: lineLog, timekeeper: timekeeper, relayTimers: relayTimers, notify: notify)
        } catch {
            lineLog?.close()
            throw error
        }
    }

    private static func assembleSimulated(
        _ config: VenddConfig, stateDirectory: String, lineLog: LineChangeLog?, timekeeper: any Timekeeper, relayTimers: any Timekeeper,
        notify: @escaping HardwareNoticeHandler
    ) throws(HardwareError) -> Hardware {
        // The cams' and the changer's memories are read before any line is requested (the hoppers'
        // with the hoppers, below): one that does not read back stops start-up. The MDB devices
        // run in-process behind a simulated interface, unless a `unix:` port names a simulator
        // or bridge to drive instead.
        let world: SimulatedWorld, simulatedMDB: InProcessMDB?
        do {
            world = try SimulatedWorld(
                slots: config.slots, buttons: config.buttons,
                coinChannels: config.coinAcceptor?.channels ?? [], timekeeper: timekeeper, matrix: config.motorMatrix, defaultChip: config.gpio.chip,
                camsFile: SimulatedDeviceMemory(path: "\(stateDirectory)/simulated-cams.txt", device: "simulated spiral motors"), lineLog: lineLog)
            if let settings = config.mdb, !settings.port.hasPrefix("unix:") {
                simulatedMDB = try InProcessMDB(settings: settings, stateDirectory: stateDirectory)
            } else {
                simulatedMDB = nil
            }
        } catch {
            throw .simulatedMemory(error)
        }
        let dispenser: Dispenser, panel: InputPanel
        do {
            (dispenser, panel) = try requestLines(on: world.chips, config: config, timekeeper: timekeeper, relayTimers: relayTimers, notify: notify)
        } catch {
            throw .gpio(error)
        }
        let acceptorLink = ccTalkLink(config, real: false)
        let (acceptor, coins) =
            coinAcceptor(config, link: acceptorLink, real: false, timekeeper: timekeeper) ?? (
                world.coinAcceptor,
                config.coinAcceptor.map { "simulated \($0.protocol.rawValue) acceptor (\($0.channels.count) channels)" } ?? "none configured"
            )
        // A hopper on a `unix:` port, its own or the real coin acceptor's, gets its real driver.
        let hoppers: PayoutHoppers
        do throws(HardwareError) {
            hoppers = try payoutHoppers(config, acceptorLink: acceptorLink, timekeeper: timekeeper) { device throws(HardwareError) in
                do throws(SimulatedDeviceMemory.Unreadable) {
                    return try SimulatedHopper(
                        coin: device.coin, identity: "simulated-hopper@\(device.address)", coins: SimulatedHopper.initialCoins,
                        memoryFile: SimulatedDeviceMemory(
                            path: "\(stateDirectory)/simulated-hopper-\(device.address).txt", device: "simulated hopper at address \(device.address)"),
                        timekeeper: timekeeper)
                } catch {
                    throw .simulatedMemory(error)
                }
            }
        } catch {
            dispenser.releaseAll()
            panel.release()
            throw error
        }
        let mdb = config.mdb.map { MDBCashDevices(settings: $0, timekeeper: timekeeper, interface: simulatedMDB?.link) }
        return Hardware(
            panel: panel, dispenser: dispenser, coinAcceptor: joined(acceptor, mdb),
            payouts: payoutBank(config, hoppers.devices, then: changerPayout(config, mdb), timekeeper: timekeeper), world: world,
            gpioDescription: "simulated (\(Set(config.lines.map(\.line)).count) lines)",
            coinAcceptorDescription: describe(coins, config, mdb), mdb: mdb, simulatedMDB: simulatedMDB,
            hopperLinks: Array(hoppers.ownLinks.values), lineLog: lineLog)
    }

    /// The machine's own GPIO chip through libgpiod, and the configured coin acceptor's driver.
    static func real(
        _ config: VenddConfig, timekeeper: any Timekeeper, relayTimers: any Timekeeper,
        notify: @escaping HardwareNoticeHandler
    ) throws(HardwareError) -> Hardware {
        let acceptorLink = ccTalkLink(config, real: true)
        let hoppers = try payoutHoppers(config, acceptorLink: acceptorLink, timekeeper: timekeeper, simulated: nil)
        // Each chip the file names (the SoC's, expanders') is opened once; a line naming none is
        // on gpio.chip.
        let chips = GPIOChipSet(defaultChip: config.gpio.chip, origin: config.gpio.chipOrigin) { name throws(GPIOError) in try LibgpiodChip(name) }
        let dispenser: Dispenser, panel: InputPanel
        do {
            try checkDistinct(config.lines, on: chips)
            (dispenser, panel) = try requestLines(on: chips, config: config, timekeeper: timekeeper, relayTimers: relayTimers, notify: notify)
        } catch {
            hoppers.closeLinks(acceptorLink)
            throw .gpio(error)
        }
        let chipNames = chips.openedChips.values.compactMap { $0 as? LibgpiodChip }.map { "\($0.name) [\($0.label)]" }.sorted()
        let debounce = panel.isDebouncedByBackend ? "kernel debounce" : "software debounce"
        let (acceptor, coins) = coinAcceptor(config, link: acceptorLink, real: true, timekeeper: timekeeper) ?? (NoCoinAcceptor(), "none configured")
        let mdb = config.mdb.map { MDBCashDevices(settings: $0, timekeeper: timekeeper) }
        return Hardware(
            panel: panel, dispenser: dispenser, coinAcceptor: joined(config.coinAcceptor == nil ? nil : acceptor, mdb),
            payouts: payoutBank(config, hoppers.devices, then: changerPayout(config, mdb), timekeeper: timekeeper), world: nil,
            gpioDescription: "\(chipNames.joined(separator: ", ")) via \(LibgpiodChip.libraryDescription), \(debounce)",
            coinAcceptorDescription: describe(coins, config, mdb), mdb: mdb, hopperLinks: Array(hoppers.ownLinks.values))
    }

    /// The configured acceptor's real driver when wanted. A `unix:` port is always real, even in
    /// simulation: a ccTalk simulator or a serial bridge listens there.
    static func coinAcceptor(
        _ config: VenddConfig, link: CcTalkLink?, real: Bool,
        timekeeper: any Timekeeper
    ) -> (any CoinAcceptor, String)? {
        guard let coins = config.coinAcceptor, real || coins.port.hasPrefix("unix:") else { return nil }
        return (CoinAcceptorFactory.make(coins, link: link, timekeeper: timekeeper), CoinAcceptorFactory.describe(coins))
    }

    /// The bus of a ccTalk acceptor that gets its real driver, for hoppers to share.
    private static func ccTalkLink(_ config: VenddConfig, real: Bool) -> CcTalkLink? {
        guard let coins = config.coinAcceptor, real || coins.port.hasPrefix("unix:") else { return nil }
        return CoinAcceptorFactory.ccTalkLink(coins)
    }

    /// The hoppers as payout devices, and the links of the ports only hoppers are on.
    private struct PayoutHoppers {
        var devices: [(PayoutDeviceConfig, any PayoutDevice)] = []
        var ownLinks: [String: CcTalkLink] = [:]

        /// Until the acceptor's driver starts, the links are start-up's to close.
        func closeLinks(_ acceptorLink: CcTalkLink?) {
            acceptorLink?.close()
            for link in ownLinks.values { link.close() }
        }
    }

    /// Each configured hopper, identified now: one that cannot be used stops start-up. A hopper
    /// on the coin acceptor's port (no `port`, or the same one) shares the acceptor's link; the
    /// hoppers on another port share one link of their own. With `simulated`, a hopper whose bus
    /// is no `unix:` port (nor a real acceptor's) is the simulated one it returns.
    private static func payoutHoppers(
        _ config: VenddConfig, acceptorLink: CcTalkLink?, timekeeper: any Timekeeper,
        simulated: ((PayoutDeviceConfig) throws(HardwareError) -> any PayoutDevice)?
    ) throws(HardwareError) -> PayoutHoppers {
        var hoppers = PayoutHoppers()
        let acceptor = config.coinAcceptor
        do throws(HardwareError) {
            for device in config.payoutDevices {
                guard let port = device.port(sharing: acceptor) else {
                    throw HardwareError.unsupported(
                        "\(device.origin.path) (\(device.origin.location)): this hopper has no port and there is no coin acceptor whose bus it could share; give it a port"
                    )
                }
                let link: CcTalkLink
                if let acceptorLink, port == acceptor?.port {
                    link = acceptorLink
                } else if let simulated, !port.hasPrefix("unix:") {
                    hoppers.devices.append((device, try simulated(device)))
                    continue
                } else {
                    link = hoppers.ownLinks[port] ?? CcTalkLink(port: port, baudRate: 9_600, echo: false)
                    hoppers.ownLinks[port] = link
                }
                let hostAddress = link === acceptorLink ? acceptor?.cctalk?.hostAddress ?? 1 : 1
                hoppers.devices.append(
                    (
                        device,
                        try ccTalkHopper(
                            device, port: port, hostAddress: hostAddress, link: link,
                            timekeeper: timekeeper)
                    ))
            }
        } catch {
            hoppers.closeLinks(acceptorLink)
            throw error
        }
        return hoppers
    }

    /// The payout devices as one queue: the hoppers, the largest coin asked first, then the MDB
    /// changer (which holds every value).
    private static func payoutBank(
        _ config: VenddConfig, _ hoppers: [(PayoutDeviceConfig, any PayoutDevice)],
        then others: [any PayoutDevice], timekeeper: any Timekeeper
    ) -> PayoutBank? {
        let devices = hoppers.sorted { $0.0.coin > $1.0.coin }.map(\.1) + others
        guard config.machine.payout == .change, !devices.isEmpty else { return nil }
        return PayoutBank(devices: devices, timekeeper: timekeeper)
    }

    private static func ccTalkHopper(
        _ device: PayoutDeviceConfig, port: String, hostAddress: Int, link: CcTalkLink,
        timekeeper: any Timekeeper
    ) throws(HardwareError) -> CcTalkHopper {
        do {
            return try CcTalkHopper.connect(
                coin: device.coin, address: device.address, hostAddress: hostAddress, port: port,
                on: link, timekeeper: timekeeper
            ).0
        } catch {
            throw .unsupported(
                "\(device.origin.path) (\(device.origin.location)): the ccTalk hopper at address \(device.address) on \(link.name) cannot be used: \(error)"
            )
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
        guard let mdb else { return coins }
        return config.coinAcceptor == nil ? mdb.description : "\(coins); \(mdb.description)"
    }

    /// Two spellings of one offset (`17` and `GPIO17`) on one chip are one line: refused.
    private static func checkDistinct(_ lines: [LineUse], on chips: GPIOChipSet) throws(GPIOError) {
        for (_, uses) in Dictionary(grouping: lines, by: { $0.chip ?? chips.name }).sorted(by: { $0.key < $1.key }) {
            guard let chip = try chips.chip(uses[0].chip, for: uses[0].origin) as? LibgpiodChip else { continue }
            try chip.checkDistinct(uses)
        }
    }

    /// Relays first, so that every output is requested inactive before any input can act. The
    /// dispenser's timers run on the relay timers, the panel's debounce on the general ones.
    private static func requestLines(
        on chip: any GPIOChipBackend, config: VenddConfig, timekeeper: any Timekeeper, relayTimers: any Timekeeper,
        notify: @escaping HardwareNoticeHandler
    ) throws(GPIOError) -> (Dispenser, InputPanel) {
        let dispenser = try Dispenser(chip: chip, slots: config.slots, matrix: config.motorMatrix, timekeeper: relayTimers, notify: notify)
        do {
            return (dispenser, try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons, timekeeper: timekeeper))
        } catch {
            dispenser.releaseAll()
            throw error
        }
    }

    /// Starts the devices, each reporting to `route` from the thread that read it: the payout
    /// devices' inventory, the coin acceptor's (and the MDB bus's: coins, bills, card readers)
    /// events, then the panel's presses, switches and drops.
    func start(reportingTo route: DeviceReportRoute, lastSequence: @escaping @Sendable (String) -> UInt64?) {
        payouts?.reportInventory(to: route.report)
        coinAcceptor.start(lastSequence: lastSequence, report: route.report)
        panel.start(route.report)
    }

    /// Hoppers stopped, coins inhibited, every relay off, lines and ports released.
    func shutDown() async {
        payouts?.emergencyStop()
        for link in hopperLinks { link.close() }
        coinAcceptor.setAcceptance(false)
        await coinAcceptor.stop()
        dispenser.releaseAll()
        panel.release()
        lineLog?.close()
    }
}

/// Why the configured hardware cannot be brought up.
enum HardwareError: Error, CustomStringConvertible {
    case gpio(GPIOError)
    case unsupported(String)
    /// `--line-log`'s file cannot be opened.
    case lineLog(SystemError)
    /// A simulated device's memory in the state directory does not read back.
    case simulatedMemory(SimulatedDeviceMemory.Unreadable)

    var description: String {
        switch self {
        case .gpio(let error): "\(error)"
        case .unsupported(let reason): reason
        case .lineLog(let error): "--line-log: \(error)"
        case .simulatedMemory(let error): "\(error)"
        }
    }

    /// A memory that does not read back is persisted state to mend, not hardware to wait for.
    var exitStatus: Int32 {
        if case .simulatedMemory = self { ExitStatus.dataError } else { ExitStatus.unavailable }
    }
}
