import Logging
import Synchronization
import VendControl
import VendingCore

/// Where the machine's events go once they have happened, published by the machine's lane as it
/// carries out each input's effects: the log (journald, with their fields; written on the log
/// lane) and every `vendctl watch`. Each subscriber gets them in order, handed over under this
/// fan-out's own short lock (never the machine's state); what it does with a backlog is its own
/// business (the control server drops a watcher that falls too far behind).
final class EventFanOut: Sendable {
    typealias SubscriptionID = UInt64

    private let logger: Logger
    private let subscribers = Mutex<(next: SubscriptionID, deliveries: [SubscriptionID: @Sendable (EventLine) -> Void])>((0, [:]))

    init(logger: Logger) {
        self.logger = logger
    }

    func publish(_ event: MachineEvent, format: MoneyFormat, at wallClockMilliseconds: Int64) {
        let description = EventDescription(event, format: format)
        logger.log(level: description.level, "\(description.text)", metadata: description.fields)
        let line = EventLine(at: wallClockMilliseconds, kind: description.kind, text: description.text)
        subscribers.withLock { state in
            for deliver in state.deliveries.values { deliver(line) }
        }
    }

    /// `deliver` gets every event from now on, in order, on the thread that publishes it (the
    /// machine's lane, carrying out the event's effect): it must only hand the line over, never
    /// block.
    func subscribe(_ deliver: @escaping @Sendable (EventLine) -> Void) -> SubscriptionID {
        subscribers.withLock { state in
            state.next += 1
            state.deliveries[state.next] = deliver
            return state.next
        }
    }

    func unsubscribe(_ id: SubscriptionID) {
        _ = subscribers.withLock { $0.deliveries.removeValue(forKey: id) }
    }

    func endAll() {
        subscribers.withLock { $0.deliveries.removeAll() }
    }
}
