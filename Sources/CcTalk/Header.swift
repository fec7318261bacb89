/// The ccTalk headers a coin-acceptor and hopper host and its simulator use (Part 2 §3, Part 3
/// Appendix 13).
public enum Header: UInt8, Sendable, CaseIterable {
    case reply = 0
    case resetDevice = 1
    case requestCommsRevision = 4
    case nak = 5
    case busy = 6
    case testHopper = 163
    case enableHopper = 164
    case requestHopperStatus = 166
    case dispenseHopperCoins = 167
    case emergencyStop = 172
    case requestCoinID = 184
    case requestBuildCode = 192
    case requestPayoutHighLowStatus = 217
    case requestMasterInhibitStatus = 227
    case modifyMasterInhibitStatus = 228
    case readBufferedCredit = 229
    case requestInhibitStatus = 230
    case modifyInhibitStatus = 231
    case performSelfCheck = 232
    case requestSoftwareRevision = 241
    case requestSerialNumber = 242
    case requestProductCode = 244
    case requestEquipmentCategory = 245
    case requestManufacturerID = 246
    case requestPollingPriority = 249
    case simplePoll = 254

    /// Safe to send again when the reply is lost: it reads, or sets a state to a fixed value.
    /// A reset is not (a second reset could wipe events that arrived after the first), nor is a
    /// dispense (a second one pays twice: the hopper's event counter says whether the first was
    /// taken, Part 4 "Payouts Rule 2"), nor an emergency stop (its reply counts the coins unpaid).
    public var isIdempotent: Bool { ![.resetDevice, .dispenseHopperCoins, .emergencyStop].contains(self) }
}
