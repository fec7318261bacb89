import VendConfig
import VendControl
import VendingCore

extension MachineController.View {
    /// The machine's queries as this view holds them.
    var reports: Reports {
        Reports(
            machine: machine, format: config.machine.moneyFormat, machineName: config.machine.name,
            levelSensedCoins: hardware?.payouts?.hasLevelSensedCoins ?? false, zoneOrder: config.zones.map(\.settings.id),
            coldZones: Set(config.zones.filter { $0.settings.kind == .cold }.map(\.settings.id)),
            paymentDevices: Self.paymentDevices(config),
            dexIdentity: config.dex.map { ($0.communicationID, $0.assetNumber) }, readers: config.cardReaders)
    }

    /// The devices in `config` whose DEX records are sent even before they took money.
    static func paymentDevices(_ config: VenddConfig) -> [String] {
        let readers = config.cardReaders.map { Payment.card($0).description }
        return readers + (config.mdb?.billValidator == nil ? [] : ["bill-validator"])
    }
}

/// What `vendctl status` and the reports read: the view the machine's lane published last.
extension MachineController {
    /// The machine's queries as they stand now.
    var reports: Reports {
        var reports = view.reports
        reports.now = requests.now
        return reports
    }

    func status() -> StatusReport {
        let view = view
        let hardware = view.hardware
        var report = StatusReport(
            machine: view.machine, config: view.config, fault: view.fault?.reason, switches: view.switches,
            hardware: hardware.map { ($0.gpioDescription, $0.coinAcceptorDescription, $0.world != nil) },
            payouts: hardware?.payouts,
            health: notices.report(gpio: hardware?.gpioDescription, coinAcceptor: hardware?.coinAcceptorDescription),
            at: requests.now)
        if let stacker = hardware?.mdb?.bus.stacker {
            report.billStacker = StatusReport.Stacker(bills: stacker.bills, capacity: stacker.capacity, full: stacker.full)
        }
        if let readers = hardware?.cardReaders?.readerStates, !readers.isEmpty {
            report.cardReaders = readers.map {
                StatusReport.CardReaderState(
                    reader: $0.reader.rawValue, ready: view.machine.cardReaders[$0.reader] != nil, description: $0.description)
            }
        }
        if let outbox, let broker = view.config.mqtt?.broker {
            let summary = outbox.summary
            var fleet = StatusReport.FleetOutbox(
                broker: broker.url, connected: outbox.isConnected, pending: summary.count, oldest: summary.oldest)
            fleet.lastSeq = summary.lastSequence
            if outbox.keepUntilStored {
                fleet.storedSeq = summary.stored
                fleet.awaitingStore = summary.deliveredNotStored
            }
            report.fleetOutbox = fleet
        }
        report.dexPort = dexSessions.status.map { port in
            var port = port
            let dex = view.machine.dex
            port.intervalResetMode = dex.intervalMode.rawValue
            port.eventResetMode = dex.eventMode.rawValue
            port.reads = dex.reads
            port.resets = dex.resets
            port.passCodeSet = dex.passCode != nil
            port.lastReadAt = dex.lastRead?.at.millisecondsSinceEpoch
            return port
        }
        report.zones = climate.withLock { $0 }?.status(locks: view.machine.healthLocks)
        if report.zones != nil { report.temperatureUnit = view.config.machine.temperatureUnit.rawValue }
        return report
    }
}
