import CcTalk

/// What the simulated acceptor is, before anything happens to it.
public struct DeviceSettings: Sendable {
    public var address: UInt8 = 2
    public var checksum: FrameChecksum = .simple8
    public var serialNumber: UInt32 = 12_345_678
    /// Positions 1…16; missing ones are unprogrammed ("......").
    public var coinIDs: [String] = ["KR010A", "KR050A", "KR100A", "KR500A"]
    /// `[units][value]` of `request polling priority`: 200 ms.
    public var pollingPriority: [UInt8] = [2, 20]

    public init() {}
}

/// A ccTalk coin acceptor as Part 2 and 3 of the spec describe it, without any I/O: a packet in,
/// a packet (or silence) out. Inhibits start active, as after power-up; a coin is accepted only
/// on an enabled position with the master inhibit released, otherwise it is returned with an
/// "inhibited coin" event. Not thread-safe: `CcTalkSimulator` serialises access.
public struct SimulatedAcceptorDevice: Sendable {
    public var settings: DeviceSettings
    public private(set) var counter: UInt8 = 0
    /// Newest first, five pairs: `[result A][result B]`.
    public private(set) var buffer: [(UInt8, UInt8)] = Array(repeating: (0, 0), count: 5)
    public private(set) var masterInhibitActive = true
    public private(set) var inhibitMask: [UInt8] = [0, 0]
    /// Events waiting inside the device when it releases only two per poll.
    public private(set) var held: [(UInt8, UInt8)] = []
    public var releasesTwoPerPoll = false
    public private(set) var pollCount = 0

    public init(settings: DeviceSettings = DeviceSettings()) {
        self.settings = settings
    }

    public enum InsertOutcome: Sendable, Equatable {
        case accepted
        case returned(String)
    }

    public var isAccepting: Bool { !masterInhibitActive && inhibitMask != [0, 0] }

    public func isEnabled(_ position: Int) -> Bool {
        Payload.enabledPositions(inhibitMask).contains(position)
    }

    /// A coin of `position` goes in.
    public mutating func insert(_ position: Int) -> InsertOutcome {
        guard (1...16).contains(position), position <= settings.coinIDs.count else {
            record((0, 1))  // reject coin: not a coin the device knows
            return .returned("position \(position) is not programmed")
        }
        guard !masterInhibitActive, isEnabled(position) else {
            record((0, 2))
            return .returned(masterInhibitActive ? "master inhibit active" : "position \(position) inhibited")
        }
        record((UInt8(position), 0))
        return .accepted
    }

    /// `count` coins at once, all accepted without waiting for a poll (a burst faster than the
    /// host polls, so more than five events can pile up between two polls).
    public mutating func burst(_ position: Int, count: Int) {
        for _ in 0..<count { add((UInt8(position), 0)) }
    }

    /// An error event (Part 3 Table 2), e.g. 1 = reject coin, 14 = credit sensor blocked.
    public mutating func error(_ code: UInt8) {
        record((0, code))
    }

    /// Power cycle: counter 0, empty buffer, inhibits back on.
    public mutating func reset() {
        counter = 0
        buffer = Array(repeating: (0, 0), count: 5)
        held.removeAll()
        masterInhibitActive = true
        inhibitMask = [0, 0]
    }

    private mutating func record(_ event: (UInt8, UInt8)) {
        if releasesTwoPerPoll { held.append(event) } else { add(event) }
    }

    private mutating func add(_ event: (UInt8, UInt8)) {
        counter = counter == 255 ? 1 : counter + 1
        buffer.insert(event, at: 0)
        buffer.removeLast()
    }

    /// The reply to one request addressed to this device (or broadcast); nil = no reply, as for
    /// an unknown header (Part 1 §13).
    public mutating func respond(to request: Frame) -> Frame? {
        guard request.destination == settings.address || request.destination == 0 else { return nil }
        guard let header = Header(rawValue: request.header), let data = reply(to: header, request.data) else { return nil }
        return Frame(
            destination: request.source ?? 1, source: settings.checksum == .crc16 ? nil : settings.address,
            header: Header.reply.rawValue, data: data)
    }

    private mutating func reply(to header: Header, _ data: [UInt8]) -> [UInt8]? {
        switch header {
        case .simplePoll: return []
        case .requestEquipmentCategory: return Array("Coin Acceptor".utf8)
        case .requestManufacturerID: return Array("SIM".utf8)
        case .requestProductCode: return Array("CCSIM1".utf8)
        case .requestBuildCode: return Array("STD01   ".utf8)
        case .requestSoftwareRevision: return Array("SIM-1.0".utf8)
        case .requestCommsRevision: return [1, 4, 2]
        case .requestSerialNumber:
            let serial = settings.serialNumber
            return [UInt8(serial & 0xFF), UInt8(serial >> 8 & 0xFF), UInt8(serial >> 16 & 0xFF)]
        case .requestPollingPriority: return settings.pollingPriority
        case .requestCoinID:
            guard data.count == 1, (1...16).contains(data[0]) else { return nil }
            let index = Int(data[0]) - 1
            return Array((index < settings.coinIDs.count ? settings.coinIDs[index] : "......").utf8)
        case .modifyInhibitStatus:
            guard data.count == 2 else { return nil }
            inhibitMask = data
            return []
        case .requestInhibitStatus: return inhibitMask
        case .modifyMasterInhibitStatus:
            guard data.count == 1 else { return nil }
            masterInhibitActive = data[0] & 1 == 0
            return []
        case .requestMasterInhibitStatus: return [masterInhibitActive ? 0 : 1]
        case .readBufferedCredit:
            pollCount += 1
            for _ in 0..<min(2, held.count) { add(held.removeFirst()) }
            return [counter] + buffer.flatMap { [$0.0, $0.1] }
        case .performSelfCheck: return [0]
        case .resetDevice:
            reset()
            return []
        // An acceptor ignores what only a hopper answers.
        case .reply, .nak, .busy, .testHopper, .enableHopper, .requestHopperStatus, .dispenseHopperCoins, .emergencyStop,
            .requestPayoutHighLowStatus:
            return nil
        }
    }
}
