extension StatusReport {
    /// The DEX port and its last sessions, newest last; absent without a `dex:` section.
    public struct DEXPort: Codable, Sendable, Equatable {
        public let port: String
        /// The port is open (a tty that exists, a socket that answered).
        public let open: Bool
        public let sessions: [DEXSession]
        /// SD105 and SD106 as the last handheld set them: "AUTO" (a read resets) or "SAVE".
        /// Absent from older daemons.
        public var intervalResetMode: String? = nil
        public var eventResetMode: String? = nil
        /// Reads completed and interval resets since initialisation (EA309, EA310).
        public var reads: Int? = nil
        public var resets: Int? = nil
        /// A DDCMP security and pass code is kept (learnt from a handheld): only it reads.
        public var passCodeSet: Bool? = nil
        /// When a handheld last read the audit, in milliseconds since the Unix epoch; absent:
        /// never (and from older daemons).
        public var lastReadAt: Int64? = nil

        public init(port: String, open: Bool, sessions: [DEXSession]) {
            self.port = port
            self.open = open
            self.sessions = sessions
        }
    }

    /// One DEX session: who, what, and how it ended.
    public struct DEXSession: Codable, Sendable, Equatable {
        /// Milliseconds since the Unix epoch, when it ended.
        public let at: Int64
        /// The handheld's communication ID; nil when it never got through a first handshake.
        public let handheld: String?
        /// "read", "configure", or "none" before a first handshake.
        public let operation: String
        /// "delivered", "configured", "failed".
        public let result: String
        public let detail: String

        public init(at: Int64, handheld: String?, operation: String, result: String, detail: String) {
            self.at = at
            self.handheld = handheld
            self.operation = operation
            self.result = result
            self.detail = detail
        }
    }
}
