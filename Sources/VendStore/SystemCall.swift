import Glibc
import VendPOSIX

/// `VendPOSIX.systemCall` (retried on EINTR), its failure told as the store's error naming the
/// operation and the file. Every system call of the store goes through here.
@discardableResult
func systemCall<Value: BinaryInteger>(
    _ operation: String, _ path: String, _ call: () -> Value
) throws(StateStoreError) -> Value {
    do {
        return try VendPOSIX.systemCall(operation, path, call)
    } catch {
        throw .system(operation: operation, path: path, errno: error.errno)
    }
}

/// The value of `call`, or nil when it failed because the file does not exist.
func ifPresent<Value>(_ call: () throws(StateStoreError) -> Value) throws(StateStoreError) -> Value? {
    do throws(StateStoreError) {
        return try call()
    } catch .system(_, _, ENOENT) {
        return nil
    }
}

/// An open file descriptor, closed when the last reference goes away. `path` names it in errors.
final class OpenFile {
    let descriptor: Int32
    var path: String

    init(_ path: String, flags: Int32, mode: mode_t = 0o640) throws(StateStoreError) {
        self.path = path
        descriptor = try systemCall("open", path) { open(path, flags | O_CLOEXEC, mode) }
    }

    // Not retried on EINTR: Linux releases the descriptor even then. Its result does not matter:
    // whatever had to be durable was fsync'd before.
    deinit { close(descriptor) }

    /// Writes everything, looping over short writes.
    func write(_ bytes: [UInt8]) throws(StateStoreError) {
        var offset = 0
        while offset < bytes.count {
            offset += try systemCall("write", path) {
                bytes.withUnsafeBytes { buffer in
                    Glibc.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer[offset...]).baseAddress, buffer.count - offset)
                }
            }
        }
    }

    func readToEnd() throws(StateStoreError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try systemCall("read", path) {
                chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    func sync() throws(StateStoreError) {
        try systemCall("fsync", path) { fsync(descriptor) }
    }

    func truncate(to length: Int) throws(StateStoreError) {
        try systemCall("ftruncate", path) { ftruncate(descriptor, off_t(length)) }
    }

    /// Takes an exclusive lock without waiting; false when another open file holds it.
    func tryLock() throws(StateStoreError) -> Bool {
        do throws(StateStoreError) {
            try systemCall("flock", path) { flock(descriptor, LOCK_EX | LOCK_NB) }
            return true
        } catch .system(_, _, EWOULDBLOCK) {
            return false
        }
    }
}
