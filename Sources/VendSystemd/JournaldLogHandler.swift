import FoundationEssentials
import Logging
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// Logs to journald through its native protocol when running under systemd (`JOURNAL_STREAM`
/// set), so metadata becomes fields: `journalctl -u vendd SLOT=A1`. Otherwise writes readable
/// lines to stderr. Either way through a `LogWriter`: logging never waits on journald.
public struct JournaldLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let writer: LogWriter

    init(writer: LogWriter) {
        self.writer = writer
    }

    /// Chooses the destination from the environment, once, at start-up. The writer returned
    /// is flushed before exit.
    public static func bootstrap(level: Logger.Level) -> LogWriter {
        let journal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil ? JournalSocket() : nil
        let writer = LogWriter(journal: journal)
        LoggingSystem.bootstrap { _ in
            var handler = JournaldLogHandler(writer: writer)
            handler.logLevel = level
            return handler
        }
        return writer
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        writer.put(LogWriter.Entry(message: "\(event.message)", level: event.level, fields: metadata.merging(event.metadata ?? [:]) { $1 }))
    }
}

/// Log entries wait here for journald (or stderr), on a lane of their own: a slow or stopped
/// journald never holds up the machine, a relay or a device (docs/architecture.md, "Lanes").
/// When 10,000 entries wait, newer ones are dropped and counted, and the next entry written says
/// how many: the machine's state and the fleet outbox are in the journal, not in the log.
public final class LogWriter: Sendable {
    struct Entry: Sendable {
        let message: String
        let level: Logger.Level
        let fields: Logger.Metadata
    }

    static let capacity = 10_000
    private let lane = Lane<Entry>(name: "vendd-log", capacity: capacity, neverWaits: true)
    private let journal: JournalSocket?

    init(journal: JournalSocket?) {
        self.journal = journal
        lane.start { [self] entry in
            let dropped = lane.takeRefusedCount()
            if dropped > 0 {
                write(
                    Entry(
                        message: "\(dropped) log entries were dropped: the log did not keep up (journald slow or stopped)",
                        level: .warning, fields: ["DROPPED": "\(dropped)"]))
            }
            write(entry)
        }
    }

    func put(_ entry: Entry) { lane.put(entry) }

    /// Writes what waits (at most 2 s): the last thing before exit.
    public func flush() { lane.close(within: .seconds(2)) }

    private func write(_ entry: Entry) {
        if let journal, journal.send(message: entry.message, priority: entry.level.syslogPriority, fields: entry.fields) { return }
        let suffix = entry.fields.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        StandardError.write("\(entry.level.tag) \(entry.message)\(suffix)\n")
    }
}

extension Logger.Level {
    /// syslog(3) priorities, which journald's PRIORITY field uses.
    var syslogPriority: Int {
        switch self {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    var tag: String {
        switch self {
        case .trace, .debug: "debug:"
        case .info: "info:"
        case .notice: "notice:"
        case .warning: "warning:"
        case .error: "error:"
        case .critical: "CRITICAL:"
        }
    }
}

/// journald's native datagram socket.
public final class JournalSocket: Sendable {
    public static let path = "/run/systemd/journal/socket"
    private let descriptor: Int32

    public init?(path: String = JournalSocket.path) {
        guard let address = try? UnixSocketAddress(path: path) else { return nil }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        guard address.withSocketAddress({ connect(descriptor, $0, $1) }) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends one entry; false when journald did not take it (the caller falls back to stderr).
    func send(message: String, priority: Int, fields: Logger.Metadata) -> Bool {
        var datagram: [UInt8] = []
        Self.append("MESSAGE", message, to: &datagram)
        Self.append("PRIORITY", "\(priority)", to: &datagram)
        Self.append("SYSLOG_IDENTIFIER", "vendd", to: &datagram)
        for (key, value) in fields {
            Self.append(Self.fieldName(key), "\(value)", to: &datagram)
        }
        let sent = datagram.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return sent == datagram.count
    }

    /// `KEY=value\n`, or for values with a newline the length-prefixed binary form.
    static func append(_ key: String, _ value: String, to datagram: inout [UInt8]) {
        datagram += Array(key.utf8)
        let bytes = Array(value.utf8)
        if bytes.contains(UInt8(ascii: "\n")) {
            datagram.append(UInt8(ascii: "\n"))
            withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { datagram += $0 }
        } else {
            datagram.append(UInt8(ascii: "="))
        }
        datagram += bytes
        datagram.append(UInt8(ascii: "\n"))
    }

    /// Journal field names are upper-case letters, digits and '_', not starting with '_'.
    static func fieldName(_ key: String) -> String {
        let cleaned = key.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }
        let name = String(cleaned).drop { $0 == "_" || $0.isNumber }
        return name.isEmpty ? "FIELD" : String(name)
    }
}
