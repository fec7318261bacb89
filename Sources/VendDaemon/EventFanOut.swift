import Logging
import Synchronization
import VendControl
import VendingCore

/// Where the machine's events go once they have happened: the journal (with their fields) and
/// every `vendctl watch`. Each subscriber gets them in order; a slow one loses the oldest.
final class EventFanOut: Sendable {
    typealias SubscriptionID = UInt64

    private let logger: Logger
    private let subscribers = Mutex<(next: SubscriptionID, streams: [SubscriptionID: AsyncStream<EventLine>.Continuation])>((0, [:]))

    init(logger: Logger) {
        self.logger = logger
    }

    func publish(_ event: MachineEvent, format: MoneyFormat, at wallClockMilliseconds: Int64) {
        let description = EventDescription(event, format: format)
        logger.log(level: description.level, "\(description.text)", metadata: description.fields)
        let line = EventLine(at: wallClockMilliseconds, kind: description.kind, text: description.text)
        subscribers.withLock { state in
            for subscriber in state.streams.values { subscriber.yield(line) }
        }
    }

    func subscribe() -> (SubscriptionID, AsyncStream<EventLine>) {
        let (stream, continuation) = AsyncStream.makeStream(of: EventLine.self, bufferingPolicy: .bufferingNewest(1_000))
        let id = subscribers.withLock { state in
            state.next += 1
            state.streams[state.next] = continuation
            return state.next
        }
        return (id, stream)
    }

    func unsubscribe(_ id: SubscriptionID) {
        subscribers.withLock { $0.streams.removeValue(forKey: id) }?.finish()
    }

    func endAll() {
        let ended = subscribers.withLock { state in
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for subscriber in ended { subscriber.finish() }
    }
}
