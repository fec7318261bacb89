import CcTalk
import VendHardware
import VendSettings
import VendingCore

/// What the acceptor says about itself at initialisation.
struct AcceptorIdentity: Sendable, Equatable {
    let category: String
    let manufacturer: String
    let productCode: String
    let serialNumber: UInt32
    let softwareRevision: String
    /// From `request polling priority`; nil when the device does not say.
    let maximumPollInterval: Duration?

    var source: String { "cctalk:\(serialNumber)" }
    var summary: String {
        "\(manufacturer) \(productCode) (\(category)), serial \(serialNumber), software \(softwareRevision)"
    }
}

/// The ccTalk host for one coin acceptor over one `CcTalkBus`: initialisation, inhibits and the
/// credit poll with its event-counter bookkeeping. Talks only through the bus and reports only
/// through `emit`, so the whole protocol is tested without I/O. Used by one thread.
final class CcTalkSession {
    enum PollOutcome: Equatable {
        case ok
        /// The device was reset or lost power: it must be initialised and enabled again.
        case deviceReset
    }

    static let replyTimeout: Duration = .milliseconds(200)
    static let attempts = 3

    private let bus: CcTalkBus
    private let channels: [CoinChannel]
    private let emit: (CoinAcceptorEvent) -> Void
    private(set) var cursor: EventCursor?
    private(set) var source = ""
    /// Events or failures that hint at a device fault since the last self-check.
    private(set) var suspicion = 0
    /// Set when an unexpected "inhibited coin" says the device forgot our inhibits.
    private(set) var inhibitsNeedReapplying = false

    init(bus: CcTalkBus, channels: [CoinChannel], emit: @escaping (CoinAcceptorEvent) -> Void) {
        self.bus = bus
        self.channels = channels
        self.emit = emit
    }

    /// Sends a command, repeating it (up to 3 times, Part 1 §12.1) only if it is idempotent.
    func request(_ header: Header, _ data: [UInt8] = [], timeout: Duration = replyTimeout) throws(BusFailure) -> [UInt8] {
        var attempt = 0
        while true {
            attempt += 1
            switch bus.exchange(header, data, timeout: timeout) {
            case .success(let reply): return reply
            case .failure(let failure):
                suspicion += 1
                guard failure.isTransient, header.isIdempotent, attempt < Self.attempts else { throw failure }
            }
        }
    }

    // MARK: - Initialisation

    /// Simple poll, then who the device is. Throws if it does not answer.
    func identify() throws(BusFailure) -> AcceptorIdentity {
        _ = try request(.simplePoll)
        let category = Payload.text(try request(.requestEquipmentCategory))
        let manufacturer = Payload.text(try request(.requestManufacturerID))
        let product = Payload.text(try request(.requestProductCode))
        let serialBytes = try request(.requestSerialNumber)
        guard let serial = Payload.serialNumber(serialBytes) else { throw .refused(header: 0) }
        let software = Payload.text(try request(.requestSoftwareRevision))
        // Optional in practice: an old device that ignores it is still usable.
        let priority = try? request(.requestPollingPriority, timeout: .milliseconds(100))
        let interval = priority.flatMap(Payload.pollingInterval).map { Duration.milliseconds($0) }
        if String(category.map { $0 == "_" ? " " : $0 }) != "Coin Acceptor" {
            emit(
                .notice("the device at the configured address says it is a '\(category)', not a 'Coin Acceptor': check cctalk.address", isFault: true)
            )
        }
        return AcceptorIdentity(
            category: category, manufacturer: manufacturer, productCode: product,
            serialNumber: serial, softwareRevision: software, maximumPollInterval: interval)
    }

    /// Reads the coin ids of positions 1–16, logs them, and warns where the channel table
    /// disagrees with what the device is programmed for.
    func checkCoinIDs() throws(BusFailure) {
        var ids: [String] = []
        var disagreements: [String] = []
        for position in 1...16 {
            let id = CoinID(try request(.requestCoinID, [UInt8(position)]))
            if !id.isEmpty { ids.append("\(position)=\(id)") }
            guard let channel = channels.first(where: { $0.channel == position }) else { continue }
            if id.isEmpty {
                disagreements.append(
                    "\(channel.origin): channel \(position) is worth \(channel.value.decimalString) here, but the acceptor has no coin programmed at position \(position)"
                )
            } else if id.hasValue(minorUnits: channel.value.minorUnits) == false {
                disagreements.append(
                    "\(channel.origin): channel \(position) is worth \(channel.value.decimalString) here, but the acceptor's coin at position \(position) is \(id)"
                )
            }
        }
        emit(.notice("coin ids: \(ids.isEmpty ? "none programmed" : ids.joined(separator: ", "))", isFault: false))
        for disagreement in disagreements {
            emit(.notice("\(disagreement): check the channel table against the acceptor's label", isFault: true))
        }
    }

    /// Enables every configured, enabled channel and releases the master inhibit, or sets it.
    func setAcceptance(_ enabled: Bool) throws(BusFailure) {
        if enabled {
            let mask = Payload.inhibitMask(enabled: channels.filter(\.enabled).map(\.channel))
            _ = try request(.modifyInhibitStatus, mask)
        }
        _ = try request(.modifyMasterInhibitStatus, [enabled ? 1 : 0])
        inhibitsNeedReapplying = false
    }

    // MARK: - Credit polling

    /// Starts counting from the device's counter. `resume` is where vendd left this device (from
    /// the durable sequence, or from memory after a reconnect), nil for a device never seen: then
    /// what its buffer holds is not credited (those coins went in before vendd knew the device)
    /// and the starting point is recorded, so a restart resumes exactly there.
    func synchronise(identity: AcceptorIdentity, resume: EventCursor?) throws(BusFailure) -> PollOutcome {
        source = identity.source
        if let resume {
            cursor = resume
            return try poll()
        }
        let (counter, _) = try readBuffer()
        let start = EventCursor(sequence: UInt64(counter))
        cursor = start
        emit(.synchronised(CoinEventID(source: source, sequence: start.sequence)))
        if counter != 0 {
            emit(
                .notice(
                    "acceptor serial \(identity.serialNumber) is new to this machine: its \(counter) earlier event(s) are not credited; counting from here",
                    isFault: false))
        }
        return .ok
    }

    /// One `read buffered credit or error codes`, credited and logged.
    func poll() throws(BusFailure) -> PollOutcome {
        guard var cursor else { preconditionFailure("poll before synchronise") }
        let (counter, results) = try readBuffer()
        let previous = cursor.counter
        let advance = cursor.advance(to: counter)
        self.cursor = cursor
        switch advance {
        case .none:
            return .ok
        case .reset(let lapStart):
            emit(.synchronised(CoinEventID(source: source, sequence: lapStart)))
            emit(
                .notice(
                    "the acceptor was reset or lost power (event counter \(previous) → 0): coins inserted since the last poll, if any, are unknown; initialising it again",
                    isFault: true))
            return .deviceReset
        case .events(let count, let newest, let lost):
            if lost > 0 {
                emit(
                    .notice(
                        "LOST \(lost) coin event(s): the event counter jumped from \(previous) to \(counter) between two polls and the acceptor keeps only the last 5; those coins are NOT credited. Check for long pauses in polling or a faulty acceptor",
                        isFault: true))
            }
            for index in (0..<min(count, EventCursor.bufferDepth)).reversed() {
                record(results[index], sequence: newest - UInt64(index))
            }
            return .ok
        }
    }

    /// Header 232, logged by name. Run when faults repeat.
    func selfCheck() {
        suspicion = 0
        guard let reply = try? request(.performSelfCheck, timeout: .milliseconds(500)), let code = reply.first else {
            emit(.notice("self-check: no answer", isFault: true))
            return
        }
        let extra = reply.count > 1 ? " (detail \(reply[1]))" : ""
        emit(.notice("self-check: \(FaultCode.name(code))\(extra)", isFault: code != FaultCode.ok))
    }

    private func readBuffer() throws(BusFailure) -> (UInt8, [(UInt8, UInt8)]) {
        let reply = try request(.readBufferedCredit)
        guard reply.count == 11 else { throw .refused(header: 0) }
        let results = stride(from: 1, to: 11, by: 2).map { (reply[$0], reply[$0 + 1]) }
        return (reply[0], results)
    }

    private func record(_ result: (UInt8, UInt8), sequence: UInt64) {
        let (position, code) = result
        guard position == 0 else { return credit(position: Int(position), path: code, sequence: sequence) }
        guard code != AcceptorEventCode.nullEvent else { return }
        if code == AcceptorEventCode.inhibitedCoin { inhibitsNeedReapplying = true }
        if !AcceptorEventCode.isRoutine(code) { suspicion += 1 }
        let rejected = AcceptorEventCode.rejected(code)
        emit(
            .notice(
                "event \(sequence): \(AcceptorEventCode.name(code)) (code \(code); coin returned: \(rejected.rawValue))",
                isFault: !AcceptorEventCode.isRoutine(code)))
    }

    private func credit(position: Int, path: UInt8, sequence: UInt64) {
        let event = CoinEventID(source: source, sequence: sequence)
        guard let channel = channels.first(where: { $0.channel == position }) else {
            emit(
                .notice(
                    "a coin was accepted on position \(position), which coin_acceptor.channels does not map: NOT credited (event \(event)). Map the position or inhibit it in the acceptor",
                    isFault: true))
            return
        }
        if !channel.enabled {
            emit(
                .notice(
                    "a coin was accepted on disabled channel \(position) (the acceptor ignored its inhibit); crediting it, since it is in the cash box",
                    isFault: true))
        }
        emit(.accepted(AcceptedCoin(channel: position, value: channel.value, event: event)))
    }
}
