import VendHardware
import VendingCore

/// The MDB coin changer as one of the machine's payout devices. It keeps no payout counter: what
/// it held when asked is its evidence instead. Within one run, what it paid is read back from
/// the changer (see MDBCoinChanger); a payout cut short by a restart is judged from its tubes
/// then and at the next start.
public final class MDBChangerPayout: PayoutDevice {
    /// How long a restart waits for the changer to come up and report its tubes before its part
    /// of an interrupted payout is left unknown. MDB asks a VMC to wait at least 30 s for data
    /// belonging to a command (§A3); bring-up itself takes a few seconds at most.
    public static let tubesWait: Duration = .seconds(30)

    private let bus: MDBBus

    public init(bus: MDBBus) { self.bus = bus }

    public var description: String { "MDB coin changer on \(bus.interfaceName)" }
    public var identity: String { bus.source("changer") }

    public func inventory() -> [ChangeStock] {
        bus.changeInventory.map { ChangeStock(value: $0.key, count: $0.value) }.sorted { $0.value < $1.value }
    }

    public func watchInventory(_ changed: @escaping @Sendable () -> Void) { bus.watchInventory(changed) }

    public func pay(_ amount: Money, completion: @escaping @Sendable (PayoutDeviceResult) -> Void) {
        pay(amount, asked: { _ in }, completion: completion)
    }

    /// `asked` gets the tubes just before the first coin is asked for, from the bus thread.
    public func pay(
        _ amount: Money, asked: @escaping @Sendable ([ChangeStock]?) -> Void,
        completion: @escaping @Sendable (PayoutDeviceResult) -> Void
    ) {
        bus.pay(amount, holding: { asked($0) }) { result in
            completion(PayoutDeviceResult(result.tally, counter: nil))
        }
    }

    /// It keeps no record of its payouts: an interrupted one is judged from the tubes instead
    /// (`resolveInterrupted`).
    public func lastPayout() -> LastPayoutReport {
        LastPayoutReport(counter: nil, paid: .zero(bus.currency), unpaid: .zero(bus.currency), isUnknown: true)
    }

    /// What left the tubes between the count recorded when it was asked and the first count
    /// since this start, once the changer is up; unknown when there is no such count.
    public func resolveInterrupted(_ record: InterruptedPayoutRecord, completion: @escaping @Sendable (InterruptedPayoutPart) -> Void) {
        let currency = bus.currency
        guard let before = record.holding else {
            return completion(
                InterruptedPayoutPart(
                    paid: .zero(currency), cannotTell: "its tubes were not counted when it was asked (a payout recorded before vendd kept that count)"
                ))
        }
        bus.whenTubesRead(within: Self.tubesWait) { now in
            guard let now else {
                return completion(
                    InterruptedPayoutPart(paid: .zero(currency), cannotTell: "it did not report its tubes within \(Self.tubesWait) of the start"))
            }
            completion(TubeHolding.paid(before: before, now: now, of: record.amount))
        }
    }

    public func emergencyStop() { bus.emergencyStop() }
}
