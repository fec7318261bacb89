import ArgumentParser
import VendConfig
import VendControl
import VendDisplay
import VendHTTP
import VendKiosk
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// `vendd-display`: what the customer sees. Reads the technician's file for its `display:`
/// section, follows vendd over the control socket, and drives the kiosk page and the LCD.
@main
struct VenddDisplay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendd-display",
        abstract: "Show the vending machine to its customers: a kiosk page and a character LCD.",
        version: venddVersion)

    @Option(help: "The configuration file (its display: section says what to drive).")
    var config: String = "/etc/vendd/vendd.yaml"

    @Option(help: "vendd's control socket (default: control.socket from the configuration).")
    var socket: String?

    @Option(help: "The kiosk's port (default: display.kiosk.port); 0 picks a free one and prints it.")
    var port: Int?

    func run() throws {
        let settings: VenddConfig
        do {
            settings = try ConfigLoader.load(file: config)
        } catch {
            say("\(error)")
            throw ExitCode(78)  // EX_CONFIG: systemd does not retry a file that cannot work
        }
        // The display keeps nothing: SIGTERM ends it at once, open event streams included.
        signal(SIGTERM) { _ in _exit(0) }
        signal(SIGPIPE, SIG_IGN)

        let follower = MachineFollower(
            socketPath: socket ?? settings.control.socketPath, currency: settings.machine.currency, log: { say($0) })
        if let lcd = settings.display.lcd { try startLCD(lcd, config: settings, follower: follower) }
        follower.start()

        guard var kiosk = settings.display.kiosk else {
            // LCD only: the follower's threads do the work.
            while true { sleep(3_600) }
        }
        if let port { kiosk = DisplaySettings.Kiosk(address: kiosk.address, port: port) }
        let server = KioskServer(config: settings, kiosk: kiosk, follower: follower)
        for missing in server.missingPictures { say("warning: picture \(missing) cannot be read; its product is shown without one") }
        let listening: HTTPServer
        do {
            listening = try server.start()
        } catch {
            say("kiosk: cannot listen: \(error)")
            throw ExitCode.failure
        }
        say("kiosk at http://\(listening.address)/")
        // libmicrohttpd's thread serves; this one has nothing left to do.
        withExtendedLifetime(listening) { while true { pause() } }
    }

    private func startLCD(_ lcd: DisplaySettings.LCD, config: VenddConfig, follower: MachineFollower) throws {
        let display: CharacterLCD
        do {
            let device = try LinuxI2CDevice(bus: lcd.bus, address: lcd.address)
            display = CharacterLCD(device: device, columns: lcd.size.columns, rows: lcd.size.rows) { say($0) }
            try display.initialise()
        } catch {
            say("LCD: \(error)")
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
        let style = MachineView.Style.lcd(config)
        follower.observe { display.show(MachineView($0, style: style)) }
        display.start()
        say("LCD \(lcd.size.rawValue) at \(lcd.bus) address 0x\(String(lcd.address, radix: 16, uppercase: true))")
    }
}

/// One line on stderr (the journal under systemd), in one write so threads do not interleave.
func say(_ line: String) {
    StandardError.write("vendd-display: \(line)\n")
}
