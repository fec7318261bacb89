import CcTalk
import VendHardware
import VendSerial
import VendSettings
import VendingCore

/// The ccTalk coin acceptor's thread: connect (and reconnect with backoff), initialise, poll at
/// the interval, apply the wanted acceptance, and say every change of state. It owns its link,
/// which hoppers on the same bus may share: their commands go between its polls.
struct CcTalkDriver: Sendable {
    let link: CcTalkLink
    let settings: CcTalkSettings
    let channels: [CoinChannel]
    private var port: String { link.name }

    /// How many polls in a row may fail before the acceptor counts as not answering.
    static let failuresBeforeDown = 3

    var addressing: CcTalkAddressing {
        CcTalkAddressing(
            device: UInt8(settings.address), host: UInt8(settings.hostAddress),
            checksum: settings.checksum == .crc16 ? .crc16 : .simple8)
    }

    func run(_ context: DriverContext) {
        var state = DriverState()
        let bus = link.bus(addressing)
        while !context.control.isStopping {
            do {
                try link.connect()
            } catch {
                state.health.down("\(error)", context.emit)
                context.control.sleep(state.backoff.next())
                continue
            }
            talk(over: bus, state: &state, context)
        }
        link.close()
    }

    /// What outlives one connection: the serial number vendd pinned, and where each device's
    /// event counter was (newer than the durable state read at start).
    private struct DriverState {
        var health = LinkHealth()
        var backoff = Backoff()
        var pinnedSerial: UInt32?
        var cursors: [String: EventCursor] = [:]
    }

    /// Talks to the device until the stream fails or vendd stops.
    private func talk(over bus: CcTalkBus, state: inout DriverState, _ context: DriverContext) {
        let emit = context.emit
        while !context.control.isStopping {
            let session = CcTalkSession(bus: bus, channels: channels, emit: emit)
            let identity: AcceptorIdentity
            do {
                identity = try session.identify()
            } catch {
                if case .disconnected(let link) = error { return state.health.down("\(link)", emit) }
                state.health.down(
                    "no answer from the ccTalk acceptor at address \(settings.address) on \(port) (\(error)): check its power and cable, and coin_acceptor.baud, cctalk.address, cctalk.checksum and cctalk.echo",
                    emit)
                context.control.sleep(state.backoff.next())
                continue
            }
            if let pinned = state.pinnedSerial, pinned != identity.serialNumber {
                // A different device mid-run: swapped, or someone impersonating the acceptor on the
                // bus. Nothing it reports is credited; see README "Coin acceptor" for the rule.
                try? session.setAcceptance(false)
                state.health.down(
                    "acceptor serial changed from \(pinned) to \(identity.serialNumber) while vendd runs: a swapped or impersonated device. Its coins are refused and nothing it reports is credited until acceptor \(pinned) is back, or vendd is restarted to accept the new one",
                    emit)
                context.control.sleep(.seconds(5))
                continue
            }
            state.pinnedSerial = identity.serialNumber
            do {
                emit(.notice("acceptor: \(identity.summary)", isFault: false))
                try session.checkCoinIDs()
                let resume = state.cursors[identity.source] ?? context.lastSequence(identity.source).map(EventCursor.init)
                // A reset seen here needs nothing more: the device is being initialised anyway.
                _ = try session.synchronise(identity: identity, resume: resume)
                if let cursor = session.cursor { state.cursors[identity.source] = cursor }
                var accepting = context.control.wantsAcceptance
                try session.setAcceptance(accepting)
                let interval = pollInterval(deviceMaximum: identity.maximumPollInterval)
                state.health.up(
                    "ccTalk acceptor ready on \(port): serial \(identity.serialNumber), polling every \(interval.wholeMilliseconds) ms, coins \(accepting ? "accepted" : "inhibited")",
                    emit)
                state.backoff.reset()
                if try poll(session, every: interval, accepting: &accepting, state: &state, context) == .deviceReset { continue }
                return
            } catch {
                if case .disconnected(let link) = error { return state.health.down("\(link)", emit) }
                state.health.down("the ccTalk acceptor on \(port) stopped answering during initialisation (\(error))", emit)
                context.control.sleep(state.backoff.next())
            }
        }
    }

    /// The credit poll. Returns when vendd stops, or `.deviceReset` when the device must be
    /// initialised again (reset, or back after not answering: it may have been swapped).
    private func poll(
        _ session: CcTalkSession, every interval: Duration, accepting: inout Bool,
        state: inout DriverState, _ context: DriverContext
    ) throws(BusFailure) -> CcTalkSession.PollOutcome {
        var failures = 0
        var nextPoll = context.control.timekeeper.now
        while true {
            let wait = nextPoll - context.control.timekeeper.now
            if wait > .zero { context.control.sleep(wait) }
            if context.control.isStopping {
                // Stopping: the acceptor refuses coins from now on, whoever polls it next.
                try? session.setAcceptance(false)
                return .ok
            }
            do {
                let wanted = context.control.wantsAcceptance
                if wanted != accepting || session.inhibitsNeedReapplying {
                    try session.setAcceptance(wanted)
                    accepting = wanted
                    context.emit(.notice("coins \(wanted ? "accepted" : "inhibited (master inhibit)")", isFault: false))
                }
                guard context.control.timekeeper.now >= nextPoll else { continue }
                nextPoll = context.control.timekeeper.now + interval
                let outcome = try session.poll()
                if let cursor = session.cursor { state.cursors[session.source] = cursor }
                if outcome == .deviceReset { return .deviceReset }
                if failures >= Self.failuresBeforeDown {
                    context.emit(.notice("the acceptor answers again after \(failures) failed polls; checking it", isFault: false))
                    return .deviceReset
                }
                failures = 0
                if session.suspicion >= 3 { session.selfCheck() }
            } catch {
                if case .disconnected = error { throw error }
                failures += 1
                if failures == Self.failuresBeforeDown {
                    state.health.down(
                        "the ccTalk acceptor on \(port) stopped answering polls (\(error)); it keeps its last 5 events and refuses coins after 1 s without polls",
                        context.emit)
                }
            }
        }
    }

    /// The configured interval, shortened to the device's own maximum when it reports one
    /// ("polling at a longer interval may lose credits", Part 2 §3.7), never below 50 ms.
    func pollInterval(deviceMaximum: Duration?) -> Duration {
        guard let deviceMaximum, deviceMaximum < settings.pollInterval else { return settings.pollInterval }
        return max(.milliseconds(50), deviceMaximum)
    }
}
