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
    public let origin: ConfigOrigin

    public init(
        port: String, baudRate: Int, communicationID: String, assetNumber: String, machineMakesFirstHandshake: Bool, origin: ConfigOrigin
    ) {
        self.port = port
        self.baudRate = baudRate
        self.communicationID = communicationID
        self.assetNumber = assetNumber
        self.machineMakesFirstHandshake = machineMakesFirstHandshake
        self.origin = origin
    }
}
