import CcTalk
import Foundation
import SocketPlug
import Synchronization
import VendPOSIX

/// Faults the wire can have; `badChecksum`, `garbage` and `partial` hit every other reply, so a
/// host that retries keeps working while one that does not loses polls.
public enum WireFault: String, Sendable, CaseIterable {
    case none
    /// No replies at all (device unpowered, cable cut on the bus side).
    case silence
    /// The checksum byte of every other reply is wrong.
    case badChecksum = "bad-checksum"
    /// Random bytes before every other reply (line noise, a solenoid firing).
    case garbage
    /// Every other reply stops halfway; after a 60 ms pause the full reply follows, so the host
    /// must drop the fragment by the 50 ms inter-byte rule (or by resynchronising).
    case partial
}

/// A ccTalk coin acceptor on a Unix socket: the listening side, one host at a time, tolerating
/// hosts that disconnect and come back. `unplug()` removes the socket the way a USB adapter's
/// device node disappears; `replug()` brings it back.
public final class CcTalkSimulator: Sendable {
    public let socketPath: String
    /// With `echo`, every byte the host sends comes back first, as on a single-wire bus.
    public let echo: Bool
    private let device: Mutex<SimulatedAcceptorDevice>
    /// A hopper on the same bus, if any; its motor turns once per status request it answers
    /// (a coin per turn unless `turnsPerCoin` says it is slower).
    private let hopper: Mutex<SimulatedHopperDevice?>
    private let plug: SocketPlug
    /// What the wire does to replies.
    private struct Wire {
        var fault = WireFault.none
        var replies = 0
        var generator = SystemRandomNumberGenerator()
    }
    private let wire = Mutex(Wire())
    /// Called with each line of what the simulator did (the CLI prints it).
    private let report: @Sendable (String) -> Void

    public init(
        socketPath: String, settings: DeviceSettings = DeviceSettings(), echo: Bool = false,
        hopper: SimulatedHopperDevice.Settings? = nil, report: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.socketPath = socketPath
        self.echo = echo
        self.report = report
        device = Mutex(SimulatedAcceptorDevice(settings: settings))
        self.hopper = Mutex(hopper.map { SimulatedHopperDevice(settings: $0) })
        plug = SocketPlug(socketPath: socketPath, threadName: "cctalk-sim", report: report)
        try plug.plug { [weak self] client in self?.serve(client) }
    }

    deinit { unplug() }

    // MARK: - The device, from the outside

    /// A customer puts a coin of `position` in.
    @discardableResult
    public func insert(_ position: Int) -> SimulatedAcceptorDevice.InsertOutcome {
        let outcome = device.withLock { $0.insert(position) }
        report("coin \(position): \(outcome == .accepted ? "accepted" : "returned") (event counter \(counter))")
        return outcome
    }

    /// `count` coins accepted between two polls.
    public func burst(_ position: Int, count: Int) {
        device.withLock { $0.burst(position, count: count) }
        report("burst of \(count) coins on position \(position) (event counter \(counter))")
    }

    public func error(_ code: UInt8) {
        device.withLock { $0.error(code) }
        report("error event \(code): \(AcceptorEventCode.name(code))")
    }

    /// Power cycle: event counter back to 0, inhibits on.
    public func reset() {
        device.withLock { $0.reset() }
        report("reset: event counter 0, master inhibit active")
    }

    public func setSerialNumber(_ serial: UInt32) {
        device.withLock { $0.settings.serialNumber = serial }
        report("serial number now \(serial)")
    }

    public func setReleasesTwoPerPoll(_ on: Bool) {
        device.withLock { $0.releasesTwoPerPoll = on }
        report("releases \(on ? "at most 2 events per poll" : "every event at once")")
    }

    public func setFault(_ fault: WireFault) {
        wire.withLock { $0.fault = fault }
        report("wire fault: \(fault.rawValue)")
    }

    public var counter: UInt8 { device.withLock { $0.counter } }

    // MARK: - The hopper, from the outside

    /// Coins left in the hopper, dispense commands it took, and its status bytes.
    public var hopperCoins: Int? { hopper.withLock { $0?.coins } }
    public var hopperDispenseCommands: Int? { hopper.withLock { $0?.dispenseCommands } }
    public var hopperEmergencyStops: Int? { hopper.withLock { $0?.emergencyStops } }

    /// The hopper's next payout stops after `coins` coins.
    public func jamHopper(after coins: Int) {
        hopper.withLock { $0?.jamAfter = coins }
        report("hopper jams after \(coins) coin(s)")
    }

    /// `coins` coins put into the hopper by hand.
    public func refillHopper(_ coins: Int) {
        hopper.withLock { $0?.refill(coins) }
        report("hopper refilled with \(coins) coin(s)")
    }

    /// The hopper loses power: counter 0, last payout forgotten.
    public func cutHopperPower() {
        hopper.withLock { $0?.powerCut() }
        report("hopper power cut")
    }
    public var isAccepting: Bool { device.withLock { $0.isAccepting } }
    public var masterInhibitActive: Bool { device.withLock { $0.masterInhibitActive } }
    public var enabledPositions: [Int] { device.withLock { Payload.enabledPositions($0.inhibitMask) } }
    public var pollCount: Int { device.withLock { $0.pollCount } }
    public var connections: Int { plug.connections }
    public var isHostConnected: Bool { plug.isHostConnected }

    public var status: String {
        let (counter, accepting, polls, held) = device.withLock { ($0.counter, $0.isAccepting, $0.pollCount, $0.held.count) }
        let (fault, connected, plugged) = (wire.withLock { $0.fault }, plug.isHostConnected, plug.isPlugged)
        return
            "event counter \(counter), \(accepting ? "accepting" : "inhibited"), \(polls) polls, \(held) held, fault \(fault.rawValue), \(plugged ? (connected ? "host connected" : "waiting for a host") : "unplugged")"
    }

    /// Waits until `condition` holds (the host polled, enabled coins…); false on timeout.
    public func wait(timeout: Duration = .seconds(10), until condition: (CcTalkSimulator) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            usleep(10_000)
        }
        return condition(self)
    }

    // MARK: - Plugging

    /// The socket disappears and the host's connection drops, as when a USB adapter is pulled.
    public func unplug() {
        if plug.unplug() { report("unplugged") }
    }

    /// Listens again (after `unplug`).
    public func replug() throws { try plug.replug() }

    private func serve(_ client: UnixSocket) {
        let address = device.withLock { $0.settings.address }
        let hopperAddress = hopper.withLock { $0?.settings.address }
        var receiver = FrameReceiver(checksum: device.withLock { $0.settings.checksum }, destination: nil)
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let count = read(client.descriptor, &buffer, buffer.count)
            guard count > 0 else { return }
            let bytes = Array(buffer[0..<count])
            if echo { send(bytes, to: client) }
            for request in receiver.receive(bytes, at: MonotonicClock.nanoseconds) {
                if let hopperAddress, request.destination == hopperAddress {
                    answerAsHopper(request, to: client)
                } else if request.destination == address || request.destination == 0 {
                    answer(request, to: client)
                }
            }
        }
    }

    private func answer(_ request: Frame, to client: UnixSocket) {
        // A silent device hears nothing either: its state does not change.
        guard wire.withLock({ $0.fault }) != .silence else { return }
        let (reply, checksum) = device.withLock { ($0.respond(to: request), $0.settings.checksum) }
        guard let reply else { return }
        var bytes = reply.encoded(checksum)
        let (fault, odd, noise) = wire.withLock { wire -> (WireFault, Bool, [UInt8]) in
            wire.replies += 1
            let noise = (0..<Int.random(in: 1...8, using: &wire.generator)).map { _ in UInt8.random(in: 0...255, using: &wire.generator) }
            return (wire.fault, wire.replies % 2 == 1, noise)
        }
        switch fault {
        case .none: break
        case .silence: return
        case .badChecksum: if odd { bytes[bytes.count - 1] &+= 1 }
        case .garbage: if odd { bytes = noise + bytes }
        case .partial:
            if odd {
                send(Array(bytes.prefix(bytes.count / 2)), to: client)
                usleep(60_000)
            }
        }
        send(bytes, to: client)
    }

    private func answerAsHopper(_ request: Frame, to client: UnixSocket) {
        guard wire.withLock({ $0.fault }) != .silence else { return }
        let reply = hopper.withLock { hopper -> Frame? in
            if request.header == Header.requestHopperStatus.rawValue { hopper?.turnMotor() }
            return hopper?.respond(to: request)
        }
        if let reply { send(reply.encoded(FrameChecksum.simple8), to: client) }
    }

    private func send(_ bytes: [UInt8], to client: UnixSocket) {
        _ = bytes.withUnsafeBytes { Foundation.send(client.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
