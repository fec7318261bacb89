#if canImport(Glibc)
    import Glibc
#endif

/// The broker password, kept out of the configuration: a file holding one line
/// `username:password` that only its owner may read (mode 0600 or stricter).
public enum MQTTCredentials {
    public static func read(_ path: String) throws(MQTTError) -> (username: String, password: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MQTTError(description: "\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw MQTTError(description: "\(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & 0o077 == 0 else {
            throw MQTTError(
                description:
                    "\(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))): it holds the broker password; chmod 600 \(path)")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw MQTTError(description: "\(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? ""
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
            throw MQTTError(description: "\(path) must hold one line username:password")
        }
        return (String(line[..<colon]), String(line[line.index(after: colon)...]))
    }
}
