import VendSettings
import VendingCore

/// Things the hardware layer tells the log: what the relays and the acceptor did, and faults a technician should
/// see in `journalctl -u vendd`.
public enum HardwareNotice: Sendable, Equatable {
    case relayEnergised(SlotID, line: LineReference)
    case relayReleased(SlotID, line: LineReference, after: Duration)
    /// The maximum on-time guard cut a relay the pulse logic had not released.
    case relayCutByMaximumOnTime(SlotID, line: LineReference, limit: Duration)
    /// A spiral motor was powered for one turn.
    case motorStarted(SlotID)
    /// Its home switch left home and came back: one full turn.
    case motorTurned(SlotID, after: Duration)
    /// The home switch did not leave home within the limit: the motor is missing or stalled.
    case motorDidNotLeaveHome(SlotID, limit: Duration)
    /// The home switch left home but did not come back within the limit: the spiral is jammed.
    case motorDidNotReturnHome(SlotID, limit: Duration)
    /// A vend was asked of a motor whose home switch is away from home: it was not turned.
    case motorAwayFromHome(SlotID)
    /// A vend was asked of a motor whose home line, shared with other motors, reads away: some
    /// cam on it is not home (perhaps another motor's), so this one was not turned, nor blamed.
    case sharedHomeLineAway(SlotID)
    /// The guard cut a motor the turn logic had not stopped.
    case motorCutByGuard(SlotID, limit: Duration)
    case dropSensed(SlotID, after: Duration)
    case noDropWithinWindow(SlotID, window: Duration)
    /// A drop sensor fired while no vend window was open: a jam clearing, a hand in the chute, or
    /// a faulty sensor.
    case dropOutsideWindow(LineReference)
    case interlockRefused(SlotID, busyWith: SlotID)
    case fault(String)
    /// What the coin acceptor's driver says: identity, link lost or back, rejected coins.
    case coinAcceptor(String, isFault: Bool)
    /// What a payment device on a shared bus says, its text starting with the device's name
    /// ("bill validator: validator jammed", "cashless #1: …"); health counts it as the acceptor's.
    case paymentDevice(String, isFault: Bool)
}

public typealias HardwareNoticeHandler = @Sendable (HardwareNotice) -> Void
