import Logging
import Synchronization
import VendControl
import VendDrivers
import VendHardware
import VendTime

/// Hardware notices (relays, drop sensor, faults, the coin acceptor's link) flow up through one
/// ordered stream, off the hot path: one task logs each and keeps the health `vendctl status`
/// shows.
final class HardwareNotices: Sendable {
    private let continuation: AsyncStream<(HardwareNotice, Int64)>.Continuation
    private let health: HealthRecord
    private let timekeeper: any Timekeeper
    /// Logs each notice and keeps the health; awaited by `finish`.
    private let consumer: Task<Void, Never>

    init(logger: Logger, timekeeper: any Timekeeper) {
        self.timekeeper = timekeeper
        let (stream, continuation) = AsyncStream.makeStream(of: (HardwareNotice, Int64).self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        let health = HealthRecord()
        self.health = health
        consumer = Task {
            for await (notice, at) in stream {
                let line = HardwareNoticeDescription(notice)
                logger.log(level: line.level, "\(line.text)", metadata: line.fields)
                health.state.withLock { $0.record(notice, at: at) }
            }
        }
    }

    /// The health the consumer keeps and `report` reads.
    private final class HealthRecord: Sendable {
        let state = Mutex(HardwareHealth())
    }

    /// From any thread, without waiting.
    func post(_ notice: HardwareNotice) {
        continuation.yield((notice, timekeeper.wallClockMilliseconds))
    }

    /// A new set of hardware starts healthy.
    func reset() {
        health.state.withLock { $0 = HardwareHealth() }
    }

    func report(gpio: String?, coinAcceptor: String?) -> StatusReport.Health {
        health.state.withLock { $0.report(gpio: gpio, coinAcceptor: coinAcceptor) }
    }

    /// Ends the stream and waits until every notice posted is logged.
    func finish() async {
        continuation.finish()
        await consumer.value
    }
}

/// How a hardware notice reads in the journal.
struct HardwareNoticeDescription {
    let level: Logger.Level
    let text: String
    let fields: Logger.Metadata

    init(_ notice: HardwareNotice) {
        switch notice {
        case .relayEnergised(let slot, let line):
            (level, text, fields) = (.info, "relay of slot \(slot) energised (line \(line))", ["SLOT": "\(slot)"])
        case .relayReleased(let slot, let line, let after):
            (level, text, fields) = (.info, "relay of slot \(slot) released after \(after.wholeMilliseconds) ms (line \(line))", ["SLOT": "\(slot)"])
        case .relayCutByMaximumOnTime(let slot, let line, let limit):
            (level, text, fields) = (
                .error, "relay of slot \(slot) cut by its \(limit.wholeMilliseconds) ms limit (line \(line))", ["SLOT": "\(slot)"]
            )
        case .motorStarted(let slot):
            (level, text, fields) = (.info, "motor of slot \(slot) started", ["SLOT": "\(slot)"])
        case .motorTurned(let slot, let after):
            (level, text, fields) = (.info, "motor of slot \(slot) back home after \(after.wholeMilliseconds) ms", ["SLOT": "\(slot)"])
        case .motorDidNotLeaveHome(let slot, let limit):
            (level, text, fields) = (
                .error, "motor of slot \(slot) did not leave home within \(limit.wholeMilliseconds) ms: missing, unplugged or stalled; slot locked",
                ["SLOT": "\(slot)"]
            )
        case .motorDidNotReturnHome(let slot, let limit):
            (level, text, fields) = (
                .error, "motor of slot \(slot) did not return home within \(limit.wholeMilliseconds) ms: jammed; slot locked", ["SLOT": "\(slot)"]
            )
        case .motorAwayFromHome(let slot):
            (level, text, fields) = (
                .error, "motor of slot \(slot) is away from home: not turned; slot locked until a technician clears it", ["SLOT": "\(slot)"]
            )
        case .sharedHomeLineAway(let slot):
            (level, text, fields) = (
                .error,
                "motor of slot \(slot) not turned: its shared home line reads away from home (a cam on it is not home); turn that cam home",
                ["SLOT": "\(slot)"]
            )
        case .motorCutByGuard(let slot, let limit):
            (level, text, fields) = (.error, "motor of slot \(slot) cut by its \(limit.wholeMilliseconds) ms guard", ["SLOT": "\(slot)"])
        case .dropSensed(let slot, let after):
            (level, text, fields) = (.info, "drop sensed for slot \(slot) \(after.wholeMilliseconds) ms after the relay", ["SLOT": "\(slot)"])
        case .noDropWithinWindow(let slot, let window):
            (level, text, fields) = (
                .warning, "no drop seen within \(window.wholeMilliseconds) ms for slot \(slot): check the slot for a jam or an empty spiral",
                ["SLOT": "\(slot)"]
            )
        case .dropOutsideWindow(let line):
            (level, text, fields) = (.warning, "the drop sensor on line \(line) fired while no vend was in progress", [:])
        case .interlockRefused(let slot, let busy):
            (level, text, fields) = (.error, "relay of slot \(slot) refused: slot \(busy) is still dispensing", ["SLOT": "\(slot)"])
        case .fault(let text):
            (level, self.text, fields) = (.error, "hardware: \(text)", [:])
        case .coinAcceptor(let text, let isFault):
            (level, self.text, fields) = (isFault ? .error : .notice, "coin acceptor: \(text)", [:])
        case .paymentDevice(let text, let isFault):
            (level, self.text, fields) = (isFault ? .error : .notice, text, [:])
        }
    }
}
