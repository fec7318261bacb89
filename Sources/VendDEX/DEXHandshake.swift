/// The handshake blocks' contents (EVA-DTS 6.1.1 §4.5.4–4.5.7): a communication ID of 10
/// characters, an operation, a revision and level such as R00L06, and in the second handshake a
/// two-digit response code.
public enum DEXOperation: UInt8, Sendable, Equatable {
    /// 'R': the handheld reads the audit.
    case readAudit = 0x52
    /// 'S': the sender of the first handshake sends data (the handheld its configuration; the
    /// machine, when it made the first handshake, its audit).
    case send = 0x53
    /// 'M': a manufacturer-specific state (diagnostics, flashing), which vendd does not offer.
    case manufacturer = 0x4D
}

/// The second handshake's verdict (§4.5.7).
public enum DEXResponse: String, Sendable, Equatable {
    case ok = "00"
    case unrecognisedID = "01"
    case unsupportedRevision = "02"
    case operationConflict = "03"
    case noData = "04"
    case undefinedError = "05"
    case manufacturerState = "90"

    public var meaning: String {
        switch self {
        case .ok: "OK"
        case .unrecognisedID: "communication ID not recognised"
        case .unsupportedRevision: "revision not supported"
        case .operationConflict: "operation conflict, try again"
        case .noData: "no data"
        case .undefinedError: "undefined error"
        case .manufacturerState: "manufacturer-specific state"
        }
    }
}

/// The first handshake: who speaks, what they want, which revision of the protocol.
public struct DEXFirstHandshake: Sendable, Equatable {
    public let communicationID: String
    /// The operation byte as received; `operation` is nil for one vendd does not know.
    public let operationByte: UInt8
    public let revision: String

    public var operation: DEXOperation? { DEXOperation(rawValue: operationByte) }

    public init(communicationID: String, operation: DEXOperation, revision: String) {
        self.communicationID = communicationID
        operationByte = operation.rawValue
        self.revision = revision
    }

    public var payload: [UInt8] { Array(communicationID.utf8) + [operationByte] + Array(revision.utf8) }

    /// 10 + 1 + 6 printable characters; the fields' own rules are judged by the second handshake.
    public init?(payload: [UInt8]) {
        guard payload.count == 17, payload.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        communicationID = String(decoding: payload[0..<10], as: UTF8.self)
        operationByte = payload[10]
        revision = String(decoding: payload[11..<17], as: UTF8.self)
    }
}

/// The second handshake: the answer to the first.
public struct DEXSecondHandshake: Sendable, Equatable {
    public let response: DEXResponse
    public let communicationID: String
    public let revision: String

    public init(response: DEXResponse, communicationID: String, revision: String) {
        self.response = response
        self.communicationID = communicationID
        self.revision = revision
    }

    /// Response code first, as the format tables have it.
    public var payload: [UInt8] { Array((response.rawValue + communicationID + revision).utf8) }

    /// Either order: the code before the ID (format tables) or after it (the worked example).
    public init?(payload: [UInt8]) {
        guard payload.count == 18, payload.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        let text = String(decoding: payload, as: UTF8.self)
        let characters = Array(text)
        let head = String(characters[0..<2]), afterID = String(characters[10..<12])
        if let code = DEXResponse(rawValue: head) {
            response = code
            communicationID = String(characters[2..<12])
        } else if let code = DEXResponse(rawValue: afterID) {
            response = code
            communicationID = String(characters[0..<10])
        } else {
            return nil
        }
        revision = String(characters[12..<18])
    }
}

extension DEXFirstHandshake {
    /// `RnnLnn`: R01L01 (the original) and R00L06 (DTS 6.x) are both in the field.
    public static func isRevision(_ text: String) -> Bool {
        let characters = Array(text.utf8)
        let digit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        return characters.count == 6 && characters[0] == UInt8(ascii: "R") && digit(characters[1]) && digit(characters[2])
            && characters[3] == UInt8(ascii: "L") && digit(characters[4]) && digit(characters[5])
    }

    /// Ten letters or digits.
    public static func isCommunicationID(_ text: String) -> Bool {
        let characters = Array(text.utf8)
        return characters.count == 10
            && characters.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }
}
