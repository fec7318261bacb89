import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// What a simulated device keeps across vendd's restarts, as a real one keeps it in its own
/// memory: a hopper's counter and last payout, a changer's tubes, the spirals' cams. One line of
/// fields in a file of the state directory, replaced whole and durably (a temporary file, fsync,
/// rename, fsync of the directory), so a `kill -9` or a power cut leaves the last memory, never
/// half of one. A file that is there but does not read back is an error naming it, never a fresh
/// device: a fresh hopper's coins would hide what the last one paid.
public struct SimulatedDeviceMemory: Sendable {
    public let path: String
    /// Whose memory it is ("simulated hopper at address 3"), for the error.
    public let device: String

    public init(path: String, device: String) {
        self.path = path
        self.device = device
    }

    /// Why a kept memory cannot be used.
    public struct Unreadable: Error, Equatable, CustomStringConvertible {
        public let path: String
        public let device: String
        public let reason: String

        public var description: String {
            "\(path): the memory of the \(device) cannot be read back (\(reason)); delete the file to start the simulated device afresh"
        }
    }

    /// The memory last kept, as `parse` makes it of the line's fields (nil: they make none); nil
    /// when nothing has been kept yet.
    public func recall<Memory>(_ parse: ([Substring]) -> Memory?) throws(Unreadable) -> Memory? {
        let text: String
        do {
            text = try TextFile.read(path, limit: Self.limit)
        } catch {
            guard error.errno != ENOENT else { return nil }
            throw Unreadable(path: path, device: device, reason: error.reason)
        }
        // Every memory ends its line: a file without the newline was cut short. An empty file
        // holds no fields (vendd before this one wrote "no cam away" so).
        guard text.utf8.count < Self.limit, text.isEmpty || text.hasSuffix("\n"), let memory = parse(text.split(whereSeparator: \.isWhitespace))
        else {
            throw Unreadable(path: path, device: device, reason: "\(String(text.prefix(40)).debugDescription) is not one")
        }
        return memory
    }

    /// Replaces the kept memory with `fields`. A file that cannot be written costs only the
    /// simulation its memory (the machine's own books are in its journal).
    public func keep(_ fields: [String]) {
        try? TextFile.write(fields.joined(separator: " ") + "\n", to: path, durable: true)
    }

    private static let limit = 4_096
}
