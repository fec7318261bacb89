import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// One device on an I2C bus: the PCF8574 backpack takes each written byte as its 8 output pins.
public protocol I2CDevice: Sendable {
    func write(_ bytes: [UInt8]) throws(I2CError)
}

/// Why the LCD cannot be driven, in words that say what to do.
public enum I2CError: Error, Equatable, CustomStringConvertible {
    case missingBus(String)
    case permissionDenied(String, group: String?)
    case noDevice(String, address: Int)
    case notAnI2CBus(String)
    case failed(String, operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .missingBus(let path):
            "no I2C bus at \(path): enable I2C (on a Raspberry Pi: raspi-config → Interface Options → I2C, or dtparam=i2c_arm=on in config.txt) and load the i2c-dev module (modprobe i2c-dev; list it in /etc/modules); `ls /dev/i2c-*` shows the buses there are"
        case .permissionDenied(let path, let group):
            if let group {
                "permission denied opening \(path): it is open to the '\(group)' group; add the display's user to it (SupplementaryGroups=\(group) in vendd-display.service, or usermod -aG \(group) USER)"
            } else {
                "permission denied opening \(path) (check `ls -l \(path)`)"
            }
        case .noDevice(let path, let address):
            "no device answers at address \(Self.hex(address)) on \(path): check the backpack's wiring (SDA, SCL, VCC, GND) and its address (0x27 for a PCF8574, 0x3F for a PCF8574A); `i2cdetect -y \(path.split(separator: "-").last ?? "1")` lists the devices that answer"
        case .notAnI2CBus(let path):
            "\(path) is not an I2C bus (the i2c-dev ioctl was refused)"
        case .failed(let path, let operation, let errno):
            "\(operation) on \(path) failed: \(SystemError.text(errno))"
        }
    }

    static func hex(_ address: Int) -> String { "0x" + String(address, radix: 16, uppercase: true).leftPadded(to: 2, with: "0") }
}

extension String {
    func leftPadded(to length: Int, with pad: Character) -> String {
        count >= length ? self : String(repeating: pad, count: length - count) + self
    }
}

/// A device on a Linux I2C bus through i2c-dev: open /dev/i2c-N, ioctl(I2C_SLAVE, address), then
/// each write(2) is one I2C write transaction to that address.
public final class LinuxI2CDevice: I2CDevice {
    /// linux/i2c-dev.h
    static let i2cSlave: UInt = 0x0703
    private let fd: Int32
    private let path: String
    private let address: Int

    public init(bus path: String, address: Int) throws(I2CError) {
        self.path = path
        self.address = address
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw Self.openError(path, errno: errno) }
        guard ioctl(fd, Self.i2cSlave, CInt(address)) == 0 else {
            let error = errno
            close(fd)
            throw error == ENOTTY || error == EINVAL ? .notAnI2CBus(path) : .failed(path, operation: "ioctl(I2C_SLAVE)", errno: error)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    public func write(_ bytes: [UInt8]) throws(I2CError) {
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw Self.writeError(path, address: address, errno: written < 0 ? errno : EIO) }
    }

    /// The errors of open(2) on the bus node.
    static func openError(_ path: String, errno: Int32) -> I2CError {
        switch errno {
        case ENOENT, ENODEV, ENXIO: return .missingBus(path)
        case EACCES, EPERM:
            var info = stat()
            let group = stat(path, &info) == 0 ? getgrgid(info.st_gid).map { String(cString: $0.pointee.gr_name) } : nil
            return .permissionDenied(path, group: group)
        default: return .failed(path, operation: "open", errno: errno)
        }
    }

    /// The errors of write(2): a missing acknowledge is ENXIO or EREMOTEIO depending on the bus
    /// driver (i2c-bcm2835 says EREMOTEIO, i2c-i801 ENXIO), EIO on some others.
    static func writeError(_ path: String, address: Int, errno: Int32) -> I2CError {
        switch errno {
        case ENXIO, EREMOTEIO, EIO: .noDevice(path, address: address)
        default: .failed(path, operation: "write", errno: errno)
        }
    }
}
