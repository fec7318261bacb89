import Synchronization
import VendConfig
import VendGPIO
import VendHardware
import VendingCore

/// The machine's hardware for one configuration: inputs, relays, coin acceptor, and the tasks
/// that route their events to the controller. Torn down as a whole on reload and at stop.
final class Hardware: Sendable {
    let panel: InputPanel
    let dispenser: Dispenser
    let coinAcceptor: any CoinAcceptor
    /// Present in simulation: what `vendctl sim …` drives.
    let world: SimulatedWorld?
    let gpioDescription: String
    let coinAcceptorDescription: String
    private let tasks = Mutex<[Task<Void, Never>]>([])

    private init(panel: InputPanel, dispenser: Dispenser, coinAcceptor: any CoinAcceptor, world: SimulatedWorld?,
                 gpioDescription: String, coinAcceptorDescription: String) {
        self.panel = panel
        self.dispenser = dispenser
        self.coinAcceptor = coinAcceptor
        self.world = world
        self.gpioDescription = gpioDescription
        self.coinAcceptorDescription = coinAcceptorDescription
    }

    /// Simulated hardware: the same panel, dispenser and debounce code over an in-memory chip.
    /// A coin acceptor on a `unix:` port still gets its real driver (see `coinAcceptor`).
    static func simulated(_ config: VenddConfig, notify: @escaping HardwareNoticeHandler) throws(GPIOError) -> Hardware {
        let world = SimulatedWorld(config: config)
        let (dispenser, panel) = try requestLines(on: world.chip, config: config, notify: notify)
        let (acceptor, coins) = coinAcceptor(config, real: false) ?? (world.coinAcceptor,
            config.coinAcceptor.map { "simulated \($0.protocol.rawValue) acceptor (\($0.channels.count) channels)" } ?? "none configured")
        return Hardware(panel: panel, dispenser: dispenser, coinAcceptor: acceptor, world: world,
                        gpioDescription: "simulated (\(Set(config.lines.map(\.line)).count) lines)", coinAcceptorDescription: coins)
    }

    /// The machine's own GPIO chip through libgpiod, and the configured coin acceptor's driver.
    static func real(_ config: VenddConfig, notify: @escaping HardwareNoticeHandler) throws(GPIOError) -> Hardware {
        let chip = try LibgpiodChip(config.gpio.chip)
        try chip.checkDistinct(config.lines)
        let (dispenser, panel) = try requestLines(on: chip, config: config, notify: notify)
        let debounce = panel.isDebouncedByBackend ? "kernel debounce" : "software debounce"
        let (acceptor, coins) = coinAcceptor(config, real: true) ?? (NoCoinAcceptor(), "none configured")
        return Hardware(panel: panel, dispenser: dispenser, coinAcceptor: acceptor, world: nil,
                        gpioDescription: "\(chip.name) [\(chip.label)] via \(LibgpiodChip.libraryDescription), \(debounce)",
                        coinAcceptorDescription: coins)
    }

    /// The configured acceptor's real driver when wanted. A `unix:` port is always real, even in
    /// simulation: a ccTalk simulator or a serial bridge listens there.
    static func coinAcceptor(_ config: VenddConfig, real: Bool) -> (any CoinAcceptor, String)? {
        guard let coins = config.coinAcceptor, real || coins.port.hasPrefix("unix:") else { return nil }
        return (CoinAcceptorFactory.make(coins), CoinAcceptorFactory.describe(coins))
    }

    /// Relays first, so that every output is requested inactive before any input can act.
    private static func requestLines(on chip: any GPIOChipBackend, config: VenddConfig,
                                     notify: @escaping HardwareNoticeHandler) throws(GPIOError) -> (Dispenser, InputPanel) {
        let dispenser = try Dispenser(chip: chip, slots: config.slots, notify: notify)
        do {
            return (dispenser, try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons))
        } catch {
            dispenser.releaseAll()
            throw error
        }
    }

    /// Starts forwarding panel and coin events to the controller.
    func startRouting(to controller: MachineController) {
        let panel = panel, coinAcceptor = coinAcceptor
        let started = [
            Task { await panel.run() },
            Task {
                for await event in panel.events { await controller.handle(event) }
                // The panel's stream ends only when its lines are released, or lost.
                if !Task.isCancelled {
                    await controller.hardwareFailed("the GPIO inputs stopped delivering events (chip removed or driver error)")
                }
            },
            Task {
                for await event in coinAcceptor.events { await controller.handle(event) }
            },
        ]
        tasks.withLock { $0 += started }
    }

    /// The coin cursor the acceptor resumes from, read from the machine as it is now.
    func cursorReader(for machine: Machine) -> @Sendable (String) -> UInt64? {
        let cursors = machine.coinCursors
        return { cursors[$0] }
    }

    /// Coins inhibited, every relay off, lines released, routing stopped.
    func shutDown() async {
        await coinAcceptor.setAcceptance(false)
        await coinAcceptor.stop()
        dispenser.releaseAll()
        // Routing stops before the lines go, so the end of the panel's stream is not taken for a fault.
        for task in tasks.withLock({ $0 }) { task.cancel() }
        panel.release()
    }
}
