import CcTalk
import VendHardware

/// Why a hopper cannot be used or did not answer.
public enum HopperError: Error, Equatable, CustomStringConvertible {
    case bus(BusFailure)
    /// Test hopper says it wants encrypted dispense commands, whose algorithm is not public.
    case encrypted(serial: UInt32)
    case badReply(Header)

    public var description: String {
        switch self {
        case .bus(let failure): "\(failure)"
        case .encrypted(let serial):
            "the hopper (serial \(serial)) wants encrypted dispense commands, which vendd cannot send: set it to unencrypted (serial number) mode with its maker's tool, or fit another hopper"
        case .badReply(let header): "the hopper's reply to header \(header.rawValue) is not what the spec says"
        }
    }
}

/// The ccTalk host for one hopper over one `CcTalkBus`: identification and the encrypted-hopper
/// check, status, a dispense that is never repeated blindly (a lost reply is settled by the
/// event counter), emergency stop. Talks only through the bus. Used by one thread.
final class CcTalkHopperSession {
    static let replyTimeout: Duration = .milliseconds(200)
    static let attempts = 3

    private let bus: CcTalkBus
    private(set) var serialNumber: UInt32 = 0

    init(bus: CcTalkBus) {
        self.bus = bus
    }

    /// Sends a command, repeating it (up to 3 times) only if it is idempotent.
    private func request(_ header: Header, _ data: [UInt8] = []) throws(HopperError) -> [UInt8] {
        var attempt = 0
        while true {
            attempt += 1
            switch bus.exchange(header, data, timeout: Self.replyTimeout) {
            case .success(let reply): return reply
            case .failure(let failure):
                guard failure.isTransient, header.isIdempotent, attempt < Self.attempts else { throw .bus(failure) }
            }
        }
    }

    /// Simple poll, serial number, test hopper. Refuses a hopper that wants encryption. Returns
    /// the flags test hopper reports, for the log.
    func identify() throws(HopperError) -> [String] {
        _ = try request(.simplePoll)
        guard let serial = Payload.serialNumber(try request(.requestSerialNumber)) else { throw .badReply(.requestSerialNumber) }
        serialNumber = serial
        guard let test = HopperTest(try request(.testHopper)) else { throw .badReply(.testHopper) }
        if test.encryptionEnabled { throw .encrypted(serial: serial) }
        return test.flags
    }

    func status() throws(HopperError) -> HopperStatus {
        guard let status = HopperStatus(try request(.requestHopperStatus)) else { throw .badReply(.requestHopperStatus) }
        return status
    }

    /// What its level sensors say (header 217).
    func level() throws(HopperError) -> HopperLevel {
        guard let level = HopperLevel(try request(.requestPayoutHighLowStatus)) else { throw .badReply(.requestPayoutHighLowStatus) }
        return level
    }

    /// Enables the hopper and tells it once to pay `coins` (1…255). Returns the event counter
    /// after the command, or nil when the hopper did not take it. A lost reply is settled by
    /// reading the counter: it moved if and only if the hopper took the command.
    func dispense(_ coins: Int) throws(HopperError) -> UInt8? {
        guard let data = Payload.dispense(coins, serialNumber: serialNumber) else { return nil }
        _ = try request(.enableHopper, Payload.hopperEnable(true))
        let before = try status().eventCounter
        switch bus.exchange(.dispenseHopperCoins, data, timeout: Self.replyTimeout) {
        case .success(let reply):
            guard let counter = reply.first else { throw .badReply(.dispenseHopperCoins) }
            return counter
        case .failure(.disconnected(let link)):
            throw .bus(.disconnected(link))
        case .failure:
            let after = try status().eventCounter
            return after != before ? after : nil
        }
    }

    /// Stops the motor at once; returns the coins left unpaid.
    func emergencyStop() throws(HopperError) -> Int {
        guard let unpaid = try request(.emergencyStop).first else { throw .badReply(.emergencyStop) }
        _ = try? request(.enableHopper, Payload.hopperEnable(false))
        return Int(unpaid)
    }
}
