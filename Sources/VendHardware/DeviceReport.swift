import VendingCore

/// Whatever a device tells vendd, handed over on the thread that read it, in the order it
/// happened: the one route from every driver to the machine. `Hardware.start` gives each device
/// the same `DeviceReportHandler`, which makes each report the machine's input (journaled on the
/// machine's lane before anything acts on it), a notice, or a drop for the dispenser.
public enum DeviceReport: Sendable, Equatable {
    /// A debounced button, switch or drop sensor of the input panel.
    case panel(PanelEvent)
    /// A coin acceptor, bill validator or coin changer: money in, its counters, its notices.
    case cash(CoinAcceptorEvent)
    /// A card reader's report: the core's card input it is (`cardReaderReady`,
    /// `cardSessionBegan`, `cardVendApproved`, `cardVendUnresolved`, …).
    case card(Input)
    /// The payout devices hold these coins now (a changer's tubes after its initialisation or a
    /// manual payout, a hopper's level after a refill), so that the exact-change judgement follows.
    case changeInventory([ChangeStock])
    /// A device can no longer work (the GPIO inputs stopped delivering): out of order until a
    /// restart.
    case failed(String)
}

/// Where a device hands its reports: it returns at once, and never calls back into the caller.
public typealias DeviceReportHandler = @Sendable (DeviceReport) -> Void
