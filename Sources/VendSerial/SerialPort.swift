import CLibSerialPort
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// A tty opened through libserialport 0.1.1: 8N1, no flow control, exclusive, non-blocking.
public final class SerialPort: ByteStream {
    public let name: String
    public let fileDescriptor: Int32
    private var port: OpaquePointer?

    private init(name: String, port: OpaquePointer, fileDescriptor: Int32) {
        self.name = name
        self.port = port
        self.fileDescriptor = fileDescriptor
    }

    deinit { close() }

    public static func open(path: String, baudRate: Int) throws(LinkError) -> SerialPort {
        // 0.1.1 looks the name up under /sys/class/tty/<name minus /dev/>, so a udev symlink such as
        // /dev/serial/by-id/usb-… is "not found" unless resolved first (fixed upstream in 0.1.2).
        guard let resolvedPointer = realpath(path, nil) else {
            let code = errno
            throw .cannotOpen(
                port: path,
                reason: code == ENOENT
                    ? "no such device (is the adapter plugged in? see ls -l /dev/serial/by-id/)"
                    : SystemError.text(code))
        }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        let name = resolved == path ? path : "\(path) (\(resolved))"

        var found: OpaquePointer?
        guard sp_get_port_by_name(resolved, &found) == SP_OK, let port = found else {
            throw .cannotOpen(
                port: name,
                reason: "not a serial port libserialport knows (pseudo-terminals are not supported: bridge them with socat to a unix: socket)")
        }
        guard sp_open(port, SP_MODE_READ_WRITE) == SP_OK else {
            let message = lastError()
            sp_free_port(port)
            throw .cannotOpen(port: name, reason: message + (errno == EACCES ? " (is vendd's user in the dialout group?)" : ""))
        }
        var descriptor: Int32 = -1
        _ = withUnsafeMutablePointer(to: &descriptor) { sp_get_port_handle(port, $0) }
        let stream = SerialPort(name: name, port: port, fileDescriptor: descriptor)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        guard vend_serial_claim_exclusive(descriptor) == 0 else {
            throw .cannotOpen(port: name, reason: "cannot claim it exclusively: \(SystemError.text(errno))")
        }
        try stream.configure(baudRate: baudRate)
        sp_flush(port, SP_BUF_BOTH)
        return stream
    }

    private func configure(baudRate: Int) throws(LinkError) {
        var config: OpaquePointer?
        guard sp_new_config(&config) == SP_OK, let config else {
            throw .cannotOpen(port: name, reason: "out of memory")
        }
        defer { sp_free_config(config) }
        sp_set_config_baudrate(config, Int32(baudRate))
        sp_set_config_bits(config, 8)
        sp_set_config_parity(config, SP_PARITY_NONE)
        sp_set_config_stopbits(config, 1)
        sp_set_config_flowcontrol(config, SP_FLOWCONTROL_NONE)
        guard sp_set_config(port, config) == SP_OK else {
            throw .cannotOpen(port: name, reason: "cannot set \(baudRate) 8N1: \(Self.lastError())")
        }
    }

    public func readAvailable() throws(LinkError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = sp_nonblocking_read(port, &buffer, buffer.count)
        // Called after poll() said readable: 0 bytes is end of file (the adapter was unplugged).
        guard count.rawValue > 0 else {
            throw .disconnected(port: name, reason: count.rawValue == 0 ? "end of file (unplugged?)" : Self.lastError())
        }
        return Array(buffer[0..<Int(count.rawValue)])
    }

    public func write(_ bytes: [UInt8]) throws(LinkError) {
        let written = sp_blocking_write(port, bytes, bytes.count, 500)
        guard written.rawValue == Int32(bytes.count) else {
            throw .disconnected(port: name, reason: written.rawValue < 0 ? Self.lastError() : "write timed out")
        }
    }

    public func discardInput() {
        sp_flush(port, SP_BUF_INPUT)
    }

    public func close() {
        guard let port else { return }
        sp_close(port)
        sp_free_port(port)
        self.port = nil
    }

    /// libserialport's last error (strerror on Unix); only meaningful right after a failing call.
    private static func lastError() -> String {
        guard let message = sp_last_error_message() else { return "unknown error" }
        defer { sp_free_error_message(message) }
        return String(cString: message)
    }
}
