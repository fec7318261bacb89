/// Which link the DEX port speaks (`dex.protocol`).
public enum DEXLinkProtocol: String, Sendable, Equatable, CaseIterable {
    /// EVA-DTS chapter 4, DEX/UCS: US handhelds and most telemeters, 9600 baud.
    case dexUCS = "dex-ucs"
    /// EVA-DTS chapter 3, Enhanced DDCMP: European handhelds and optical heads, 2400 baud.
    case ddcmp

    public var name: String { self == .dexUCS ? "DEX/UCS" : "DDCMP" }

    /// The rate the link starts at (EVA-DTS §4.4 and §3.4.2.1).
    public var defaultBaudRate: Int { self == .dexUCS ? 9_600 : 2_400 }
}

/// The machine's DEX port (`dex:`): where the handheld's cable comes in, and who the machine is.
public struct DEXSettings: Sendable, Equatable {
    /// A tty (`/dev/ttyS1`, `/dev/serial/by-id/…`) or `unix:/path` (a bridge, the simulator).
    public let port: String
    public let baudRate: Int
    /// The machine's communication ID (DXS01, ID101, the handshakes): 3 capitals and 7 digits.
    public let communicationID: String
    /// ID106, the operator's asset number.
    public let assetNumber: String
    /// The machine also bids for the first handshake (for handhelds that wait to be called).
    public let machineMakesFirstHandshake: Bool
    public let linkProtocol: DEXLinkProtocol
    public let origin: ConfigOrigin

    public init(
        port: String, baudRate: Int, communicationID: String, assetNumber: String, machineMakesFirstHandshake: Bool, origin: ConfigOrigin,
        linkProtocol: DEXLinkProtocol = .dexUCS
    ) {
        self.linkProtocol = linkProtocol
        self.port = port
        self.baudRate = baudRate
        self.communicationID = communicationID
        self.assetNumber = assetNumber
        self.machineMakesFirstHandshake = machineMakesFirstHandshake
        self.origin = origin
    }
}
