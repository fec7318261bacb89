import Synchronization
import VendingCore

/// The MDB coin changer as one of the machine's payout devices. It keeps no payout counter, so
/// a payout interrupted by a vendd restart is resolved as unknown for the technician (never paid
/// again); within one run, what it paid is read back from the changer (see MDBCoinChanger).
public final class MDBChangerPayout: PayoutDevice {
    private let bus: MDBBus
    private let last = Mutex<LastPayoutReport?>(nil)

    public init(bus: MDBBus) { self.bus = bus }

    public var description: String { "MDB coin changer on \(bus.port)" }
    public var identity: String { bus.source("changer") }

    public func inventory() -> [ChangeStock] {
        bus.changeInventory.map { ChangeStock(value: $0.key, count: $0.value) }.sorted { $0.value < $1.value }
    }

    public func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void) {
        bus.pay(amount) { [self] result in
            self.last.withLock { $0 = LastPayoutReport(counter: nil, paid: result.paid, unpaid: result.requested - result.paid - result.unknown,
                                                   isUnknown: !result.unknown.isZero) }
            completion(PayoutDeviceResult(paid: result.paid, unknown: result.unknown, counter: nil))
        }
    }

    public func lastPayout() -> LastPayoutReport {
        last.withLock { $0 } ?? LastPayoutReport(counter: nil, paid: .zero(bus.currency), unpaid: .zero(bus.currency), isUnknown: true)
    }

    public func emergencyStop() { bus.emergencyStop() }
}
