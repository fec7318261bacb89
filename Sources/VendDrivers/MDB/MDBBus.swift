import Synchronization
import VendHardware
import VendPOSIX
import VendSerial
import VendSettings
import VendTime
import VendingCore

/// The MDB bus as the daemon sees it: a thread that opens the master interface (reconnecting
/// after an unplug), resets the bus and runs the configured peripherals. Acceptance follows the
/// machine; payouts are queued to the changer; escrowed bills are stacked within the bill limit
/// the machine last set (`setBillLimit`), never by asking it.
public final class MDBBus: CardReaders {
    private let settings: MDBSettings
    private let control: DriverControl
    private let payouts = PayoutQueue()
    private let payoutStopped = Mutex(false)
    /// The changer's tubes as last reported, for `inventory()` without asking the bus thread.
    private let inventory = Mutex<[Money: Int]>([:])
    private let stackerLevel = Mutex<StackerLevel?>(nil)
    /// The largest bill to stack from escrow; nil (until the machine sets one): none.
    private let billLimit = Mutex<Money?>(nil)
    /// Called on the bus thread after each tube report (see `watchInventory`).
    private let inventoryWatchers = Mutex<[@Sendable () -> Void]>([])
    /// The changer's tubes as evidence (see `whenTubesRead`), and who waits for the first count.
    private let tubeWatch = Mutex(TubeWatch())
    private let started = Mutex(false)
    /// One per configured card reader, in the order of the file.
    public let cardReaders: [CardReaderMailbox]
    private let interface: MDBInterfaceLink

    /// `interface`: how the master interface is reached; by default the configured port.
    public init(settings: MDBSettings, timekeeper: any Timekeeper, interface: MDBInterfaceLink? = nil) {
        self.settings = settings
        control = DriverControl(timekeeper: timekeeper)
        cardReaders = settings.cashless.map { CardReaderMailbox(reader: $0.reader) }
        let port = PortAddress(settings.port, baudRate: MDBSettings.interfaceBaudRate)
        self.interface = interface ?? MDBInterfaceLink(name: "\(port)") { () throws(LinkError) in try port.open() }
    }

    @discardableResult
    public func post(_ command: CardReaderCommand, to reader: CardReader) -> Bool {
        guard let mailbox = cardReaders.first(where: { $0.reader == reader }) else { return false }
        mailbox.post(command)
        control.waiter.wake()
        return true
    }

    public func postToEveryReader(_ command: CardReaderCommand) {
        for mailbox in cardReaders { mailbox.post(command) }
        control.waiter.wake()
    }

    /// Readers take cards (READER ENABLE) or not (READER DISABLE).
    public func setCardAcceptance(_ accepting: Bool) {
        for mailbox in cardReaders { mailbox.accepting = accepting }
        control.waiter.wake()
    }

    public var readerStates: [(reader: CardReader, description: String)] { cardReaders.map { ($0.reader, $0.status) } }

    public var currency: Currency { settings.currency }

    /// From now on, calls `changed` (on the bus thread) whenever the changer reports its tubes:
    /// after its initialisation, a deposit into a tube, a manual dispense or a payout.
    public func watchInventory(_ changed: @escaping @Sendable () -> Void) {
        inventoryWatchers.withLock { $0.append(changed) }
    }

    /// The bill validator's stacker as last read; nil before its initialisation.
    public var stacker: StackerLevel? { stackerLevel.withLock { $0 } }

    public var port: PortAddress { PortAddress(settings.port, baudRate: MDBSettings.interfaceBaudRate) }
    /// The master interface as people are told of it: the port, or the simulated one.
    public var interfaceName: String { interface.name }

    /// Event sources: one per device kind and port, numbered on from `lastSequence`.
    public func source(_ device: String) -> String { "mdb:\(port.path):\(device)" }

    public func start(
        lastSequence: @escaping @Sendable (String) -> UInt64?, deliver outside: @escaping MDBEventHandler
    ) {
        let deliver: MDBEventHandler = { [self] event in
            switch event {
            case .changeInventory(let tubes):
                inventory.withLock { $0 = tubes }
                for changed in inventoryWatchers.withLock({ $0 }) { changed() }
            case .stacker(let level): stackerLevel.withLock { $0 = level }
            default: break
            }
            outside(event)
        }
        let alreadyStarted = started.withLock { started in
            defer { started = true }
            return started
        }
        guard !alreadyStarted else { return }
        PosixThread.start(name: "vendd-mdb") { [self] in
            run(lastSequence: lastSequence, deliver: deliver)
            // Never told to the changer: nothing of these was paid.
            for request in payouts.takeAll() {
                request.completion(.neverStarted(request.amount))
            }
            control.markFinished()
        }
    }

    public func setAcceptance(_ enabled: Bool) { control.setAcceptance(enabled) }
    public func setBillLimit(_ limit: Money?) { billLimit.withLock { $0 = limit } }

    /// Queues a payout for the changer; `completion` runs once, with what was really paid. On the
    /// bus thread, `holding` gets the tubes by value just before the first coin is asked for (and
    /// again when coins go in or out other than by paying); the payout waits until it returns.
    public func pay(
        _ amount: Money, holding: @escaping @Sendable ([ChangeStock]) -> Void = { _ in },
        completion: @escaping @Sendable (MDBPayoutResult) -> Void
    ) {
        guard settings.changer != nil else {
            return completion(.neverStarted(amount))
        }
        payouts.append(MDBPayoutRequest(amount: amount, holding: holding, completion: completion))
        control.waiter.wake()
    }

    /// Calls `action` with the changer's tubes by value (a nil count: full with 0 or 255 and
    /// more, so uncounted) once it has read TUBE STATUS since this bus was made — at once if it
    /// has — or with nil if it has not within `limit` (absent, silent, not configured).
    public func whenTubesRead(within limit: Duration, _ action: @escaping @Sendable ([ChangeStock]?) -> Void) {
        let claimed = Mutex(false)
        let once: @Sendable ([ChangeStock]?) -> Void = { levels in
            if claimed.withLock({ claimed in
                defer { claimed = true }
                return !claimed
            }) {
                action(levels)
            }
        }
        let timekeeper = control.timekeeper
        let timer = timekeeper.schedule(after: limit) { once(nil) }
        let read: @Sendable ([ChangeStock]?) -> Void = { levels in
            timekeeper.cancel(timer)
            once(levels)
        }
        let known = tubeWatch.withLock { watch -> [ChangeStock]? in
            if watch.levels == nil { watch.waiters.append(read) }
            return watch.levels
        }
        if let known { read(known) }
    }

    /// The changer read its tubes: the evidence is kept, and those waiting for it get it.
    private func tubesRead(_ levels: [ChangeStock]) {
        let waiters = tubeWatch.withLock { watch in
            defer { watch.waiters.removeAll() }
            watch.levels = levels
            return watch.waiters
        }
        for waiter in waiters { waiter(levels) }
    }

    /// What the changer's tubes held at its last report.
    public var changeInventory: [Money: Int] { inventory.withLock { $0 } }

    /// No further coins are asked of the changer; a payout underway ends with what it paid.
    public func emergencyStop() {
        payoutStopped.withLock { $0 = true }
        control.waiter.wake()
    }

    public func stop() async {
        guard started.withLock({ $0 }) else { return }
        await control.stop()
    }

    /// The drivers, made once: they keep payout state and event numbers across reconnects.
    private func makeDrivers(
        lastSequence: @Sendable (String) -> UInt64?, deliver: @escaping MDBEventHandler
    ) -> [MDBPeripheralDriver] {
        var drivers: [MDBPeripheralDriver] = []
        let control = control, payouts = payouts
        if let changer = settings.changer {
            let source = source("changer")
            drivers.append(
                MDBCoinChanger(
                    settings: changer, currency: settings.currency, format: settings.moneyFormat, currencyNumeric: settings.currencyNumeric,
                    source: source, lastSequence: lastSequence(source), emit: deliver,
                    wantsAcceptance: { control.wantsAcceptance && !control.isStopping },
                    takePayout: payouts.takeFirst, payoutStopped: { [self] in payoutStopped.withLock { $0 } },
                    tubesRead: { [self] in tubesRead($0) }))
        }
        if let bills = settings.billValidator {
            let source = source("bills")
            drivers.append(
                MDBBillValidator(
                    settings: bills, currency: settings.currency, format: settings.moneyFormat, currencyNumeric: settings.currencyNumeric,
                    source: source, lastSequence: lastSequence(source), emit: deliver,
                    wantsAcceptance: { control.wantsAcceptance && !control.isStopping },
                    shouldStack: { [self] value in value.isStackable(within: billLimit.withLock { $0 }) }))
        }
        for (reader, mailbox) in zip(settings.cashless, cardReaders) {
            drivers.append(
                MDBCashlessReader(
                    settings: reader, currency: settings.currency, currencyNumeric: settings.currencyNumeric, mailbox: mailbox,
                    emit: MDBEvent.naming(reader.reader.description, deliver),
                    wantsAcceptance: { !control.isStopping }))
        }
        return drivers
    }

    private func run(
        lastSequence: @Sendable (String) -> UInt64?, deliver: @escaping MDBEventHandler
    ) {
        let drivers = makeDrivers(lastSequence: lastSequence, deliver: deliver)
        var health = LinkHealth()
        var backoff = Backoff()
        let say: (CoinAcceptorEvent) -> Void = { if case .notice(let text, let fault) = $0 { deliver(.notice(text, isFault: fault)) } }
        while !control.isStopping {
            let stream: ByteStream
            do {
                stream = try interface.open()
            } catch {
                health.down("MDB interface: \(error)", say)
                // The interface is gone, not the devices: a changer may still be paying, and is
                // given up on only after its stall limit, as when it is silent.
                for driver in drivers { driver.stillOffline(control.timekeeper.now) }
                control.sleep(backoff.next())
                continue
            }
            let transport = QibixxTransport(stream: stream) { deliver(.notice($0, isFault: $1)) }
            let master = MDBMaster(
                transport: transport, drivers: drivers, timekeeper: control.timekeeper,
                pollInterval: settings.pollInterval, emit: deliver)
            do {
                try transport.start()
                try master.busReset()
                health.up("MDB interface ready on \(interface.name): bus reset, polling every \(settings.pollInterval.wholeMilliseconds) ms", say)
                backoff.reset()
                try serve(master)
            } catch {
                health.down("MDB interface on \(interface.name): \(error)", say)
                master.interfaceLost()
                control.sleep(backoff.next())
            }
            stream.close()
        }
    }

    /// Polls until vendd stops (then refuses coins and bills once more) or the interface fails.
    private func serve(_ master: MDBMaster) throws(MDBLinkFailure) {
        while true {
            let next = try master.service()
            if control.isStopping, !master.hasWorkInProgress {
                // One more round with acceptance off (wantsAcceptance is false once stopping).
                try master.service(force: true)
                return
            }
            let wait = next - control.timekeeper.now
            guard wait > .zero else { continue }
            if control.isStopping {
                // Finishing a payout: DriverControl.sleep no longer waits once stopping is asked.
                let alarm = control.timekeeper.schedule(after: wait) { [waiter = control.waiter] in waiter.wake() }
                _ = control.waiter.wait(for: nil, timeout: .seconds(60))
                control.timekeeper.cancel(alarm)
            } else {
                control.sleep(wait)
            }
        }
    }
}

/// How the bus reaches its master interface: the configured port, or the in-process simulation's
/// end of a socket pair (`vendd run --simulate`).
public struct MDBInterfaceLink: Sendable {
    /// As logs and `vendctl status` name it.
    public let name: String
    public let open: @Sendable () throws(LinkError) -> ByteStream

    public init(name: String, open: @escaping @Sendable () throws(LinkError) -> ByteStream) {
        self.name = name
        self.open = open
    }
}

private struct TubeWatch {
    var levels: [ChangeStock]?
    var waiters: [@Sendable ([ChangeStock]?) -> Void] = []
}

/// Payouts asked for and not yet taken by the changer driver.
private final class PayoutQueue: Sendable {
    private let queue = Mutex<[MDBPayoutRequest]>([])

    func append(_ request: MDBPayoutRequest) { queue.withLock { $0.append(request) } }
    func takeFirst() -> MDBPayoutRequest? { queue.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
    func takeAll() -> [MDBPayoutRequest] {
        queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
    }
}
