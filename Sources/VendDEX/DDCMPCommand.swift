/// The command messages a DDCMP master sends (EVA-DTS 6.1.1 §3.6.4.1), as the slave reads them.
/// Multi-byte numbers come least significant byte first, dates and times in BCD (§6.1.1).
public enum DDCMPCommand: Sendable, Equatable {
    /// 77 E0 00 S2 S1 P2 P1 DD MM YY HH MM SS U2 U1 A (§3.6.4.1.1).
    case whoAreYou(DDCMPHandheld)
    /// 77 E2 00 L1 R1 O1 O2 SL1 SL2 (§3.6.4.1.3): a list, from a byte offset, so many bytes
    /// (0: all of it).
    case readData(list: UInt8, record: UInt8, offset: Int, length: Int)
    /// 77 FF (§3.6.4.1.8).
    case finish
    /// A command vendd does not carry out: Program Slave Device E1, Write Data E3, Delete Data E4,
    /// Program Module E5, Read Memory E6, or one the specification does not define.
    case other(code: UInt8)

    /// Nil for data that is not a command (77) or too short to be the one it names.
    public init?(_ data: [UInt8]) {
        guard data.count >= 2, data[0] == DDCMPByte.command else { return nil }
        switch data[1] {
        case 0xE0:
            guard data.count >= 16 else { return nil }
            let user = String(decoding: data[13..<15].filter { (0x21...0x7E).contains($0) }, as: UTF8.self)
            self = .whoAreYou(
                DDCMPHandheld(
                    securityCode: Array(data[3..<7]), date: Array(data[7..<10]), time: Array(data[10..<13]), userID: user, userType: data[15]))
        case 0xE2:
            guard data.count >= 9 else { return nil }
            self = .readData(
                list: data[3], record: data[4], offset: Int(data[5]) | Int(data[6]) << 8, length: Int(data[7]) | Int(data[8]) << 8)
        case 0xFF:
            self = .finish
        default:
            self = .other(code: data[1])
        }
    }

    /// What a refused command is, for the technician.
    public static func name(_ code: UInt8) -> String {
        switch code {
        case 0xE0: "Who Are You"
        case 0xE1: "Program Slave Device"
        case 0xE2: "Read Data"
        case 0xE3: "Write Data"
        case 0xE4: "Delete Data"
        case 0xE5: "Program Module"
        case 0xE6: "Read Memory"
        case 0xFF: "Finish"
        default: "command 0x\(hex(code))"
        }
    }
}

/// Who asked, from the Who Are You command.
public struct DDCMPHandheld: Sendable, Equatable {
    /// S2 S1 P2 P1: the security and pass codes (zero by default, §6.1.6).
    public let securityCode: [UInt8]
    /// DD MM YY and hh mm ss in BCD, as the handheld's clock says.
    public let date: [UInt8]
    public let time: [UInt8]
    /// U2 U1: its printable characters (none when the handheld sends zeros).
    public let userID: String
    /// 0B maintenance, 0C route person.
    public let userType: UInt8

    public init(securityCode: [UInt8], date: [UInt8], time: [UInt8], userID: String, userType: UInt8) {
        self.securityCode = securityCode
        self.date = date
        self.time = time
        self.userID = userID
        self.userType = userType
    }

    /// "route person 'AB'", for the log.
    public var description: String {
        let role =
            switch userType {
            case 0x0B: "maintenance"
            case 0x0C: "route person"
            default: "user type 0x\(hex(userType))"
            }
        let id = userID.isEmpty ? "" : " '\(userID)'"
        return "\(role)\(id)"
    }
}
