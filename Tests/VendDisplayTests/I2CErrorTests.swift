import Foundation
import Testing
import VenddTestSupport

@testable import VendDisplay

#if canImport(Glibc)
    import Glibc
#endif

/// The three failures a technician meets when wiring an LCD, in the words they read.
@Suite struct I2CErrorTests {
    @Test func aMissingBusSaysHowToEnableI2C() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/i2c-7"
        #expect(throws: I2CError.missingBus(path)) { try LinuxI2CDevice(bus: path, address: 0x27) }
        #expect(
            I2CError.missingBus("/dev/i2c-1").description
                == "no I2C bus at /dev/i2c-1: enable I2C (on a Raspberry Pi: raspi-config → Interface Options → I2C, or dtparam=i2c_arm=on in config.txt) and load the i2c-dev module (modprobe i2c-dev; list it in /etc/modules); `ls /dev/i2c-*` shows the buses there are"
        )
    }

    @Test func permissionNamesTheBussGroup() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/i2c-1"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        // udev gives /dev/i2c-* to the i2c group; dialout stands in for it (it exists on Debian).
        let group = try #require(getgrnam("dialout"))
        #expect(chown(path, 0, group.pointee.gr_gid) == 0)
        let error = LinuxI2CDevice.openError(path, errno: EACCES)
        #expect(error == .permissionDenied(path, group: "dialout"))
        #expect(
            I2CError.permissionDenied("/dev/i2c-1", group: "i2c").description
                == "permission denied opening /dev/i2c-1: it is open to the 'i2c' group; add the display's user to it (SupplementaryGroups=i2c in vendd-display.service, or usermod -aG i2c USER)"
        )
    }

    @Test func noAcknowledgeMeansNoDeviceAtTheAddress() {
        // Bus drivers report a missing ACK as EREMOTEIO (i2c-bcm2835) or ENXIO (i2c-i801).
        for code in [EREMOTEIO, ENXIO] {
            #expect(LinuxI2CDevice.writeError("/dev/i2c-1", address: 0x27, errno: code) == .noDevice("/dev/i2c-1", address: 0x27))
        }
        #expect(
            I2CError.noDevice("/dev/i2c-1", address: 0x3F).description
                == "no device answers at address 0x3F on /dev/i2c-1: check the backpack's wiring (SDA, SCL, VCC, GND) and its address (0x27 for a PCF8574, 0x3F for a PCF8574A); `i2cdetect -y 1` lists the devices that answer"
        )
    }

    @Test func aFileThatIsNotAnI2CBusIsRefused() {
        #expect(throws: I2CError.notAnI2CBus("/dev/null")) { try LinuxI2CDevice(bus: "/dev/null", address: 0x27) }
    }
}
