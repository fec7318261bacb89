// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vendd",
    products: [
        .library(name: "VendingCore", targets: ["VendingCore"]),
        .executable(name: "vendd", targets: ["vendd"]),
        .executable(name: "vendctl", targets: ["vendctl"]),
        .executable(name: "vendfleet", targets: ["vendfleet"]),
        .executable(name: "vendd-display", targets: ["vendd-display"]),
        .executable(name: "vendstore", targets: ["vendstore"]),
        .executable(name: "vendstore-load", targets: ["vendstore-load"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // Pure model of the machine: money, catalog, stock, the vend state machine. No I/O, no C.
        .target(name: "VendingCore"),
        // Temperature zones: thermostat with compressor protection, defrost, and the food-safety
        // health rule, as pure state machines on instants given. No I/O, no clock.
        .target(name: "VendClimate", dependencies: ["VendingCore"]),
        // Temperature sensors read through sysfs: 1-Wire w1_therm and hwmon inputs found by name.
        .target(name: "VendSensors", dependencies: ["VendingCore", "VendPOSIX"]),
        // Aligned terminal tables that count wide (한글) characters right (check-config and vendctl),
        // and the one loop behind the escapers.
        .target(name: "VendText"),
        // The settings drivers take (lines, slots, buttons, coin channels, ccTalk), each with the
        // place in the file it came from: plain values, so drivers need no parser.
        .target(name: "VendSettings", dependencies: ["VendingCore"]),
        // libyaml as installed (Debian's libyaml-dev), the reference YAML parser.
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // YAML text to nodes that keep their line and column; values stay text. Over libyaml rather
        // than Yams, whose Foundation (regular expressions, hence ICU) cost the daemon 3.6 MiB of RSS.
        .target(name: "VendYAML", dependencies: ["CYAML"]),
        // The technician's file: YAML read into a node tree, validated with file:line:col errors.
        .target(name: "VendConfig", dependencies: ["VendingCore", "VendSettings", "VendText", "VendYAML", "VendClimate"]),
        // Hardware behind protocols: GPIO lines, relays, drop sensors, coin acceptors, payout
        // devices; the debounce / interlock / pulse / payout-bank logic shared by real and
        // simulated backends; the simulation. No driver and no C library here.
        .target(name: "VendHardware", dependencies: ["VendSettings", "VendingCore", "VendPOSIX", "VendTime"]),
        // The serial payment devices' drivers and their threads, behind VendHardware's protocols:
        // ccTalk acceptors and hoppers, the one-byte-per-coin acceptor, the MDB master with its
        // changer and bill validator (as VendGPIO is the GPIO backend).
        .target(
            name: "VendDrivers",
            dependencies: ["VendHardware", "VendSettings", "VendingCore", "CcTalk", "MDB", "VendSerial", "VendPOSIX", "VendTime", "VendDEX"]),
        // The injected clock: real time in the daemon, manual time that tests advance.
        .target(name: "VendTime", dependencies: ["VendPOSIX"]),
        // libgpiod as installed (v1 1.6.x or v2 2.x), found through pkg-config, so that
        // PKG_CONFIG_PATH can point a build at another version.
        .systemLibrary(name: "CLibgpiod", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        // One small C API over both libgpiod versions; Swift never sees gpiod.h.
        .target(name: "CGPIOShim", dependencies: ["CLibgpiod"]),
        // The real GPIO backend: chips by name/path/label, lines by offset or name, edge reading.
        .target(name: "VendGPIO", dependencies: ["CGPIOShim", "VendHardware", "VendSettings", "VendPOSIX", "VendingCore"]),
        // ccTalk on the wire: packets, checksums, the event counter, code tables. Pure, no I/O.
        .target(name: "CcTalk"),
        // MDB on the wire: blocks and their CHK, the Qibixx interface's line API, the coin
        // changer's and bill validator's commands and answers. Pure, no I/O.
        .target(name: "MDB"),
        // MDB peripherals written from the specification (changer, bill validator, card readers)
        // behind a simulated Qibixx interface: `vendd --simulate` runs them in-process, the test
        // simulators behind a socket.
        .target(name: "SimulatedMDB", dependencies: ["MDB", "VendPOSIX"]),
        // Byte streams to devices: serial ports through libserialport, Unix sockets for bridges.
        .target(name: "VendSerial", dependencies: ["CLibSerialPort", "VendPOSIX"]),
        .systemLibrary(name: "CLibSerialPort", pkgConfig: "libserialport", providers: [.apt(["libserialport-dev"])]),
        // Durable state: a write-ahead journal with a checksum per record, snapshots, crash-safe renames.
        .target(name: "VendStore", dependencies: ["VendPOSIX"]),
        // The few system calls Swift's Glibc module does not show (they need _GNU_SOURCE).
        .target(name: "CVendSystem"),
        // POSIX plumbing in one place: system calls retried on EINTR with one error type, Unix
        // sockets and their addresses, the wake pipe, the clocks, stdout and stderr, whole files. A leaf.
        .target(name: "VendPOSIX", dependencies: ["CVendSystem"]),
        // One thread's poll(2) server for clients that may be hostile: accepting with a limit,
        // buffers, deadlines on the injected clock, backpressure, hanging up. The control socket
        // is the protocol on it. Not in VendPOSIX: it needs VendTime, which needs VendPOSIX.
        .target(name: "VendPollServer", dependencies: ["CVendSystem", "VendPOSIX", "VendTime"]),
        // Pure renderings for vendctl: terminal bar chart, SVG pie chart, dates as typed. No I/O
        // but the C library's time zone rules, and no Foundation (its calendar would bring ICU).
        .target(name: "VendReports", dependencies: ["VendText"]),
        // The EVA-DTS DEX audit file with its CRC-16, and the DEX port's links (DEX/UCS, DDCMP):
        // pure and without Foundation, since vendd itself sends the audit to the fleet.
        .target(name: "VendDEX"),
        // The control socket's protocol, shared by the daemon and vendctl: versioned JSON lines.
        .target(name: "VendControl", dependencies: ["VendPOSIX", "VendingCore", "VendDEX", "VendTelemetry"]),
        // libmosquitto as installed (Debian libmosquitto-dev), and one small MQTT 5 API over it.
        .systemLibrary(name: "CMosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(name: "CMosquittoShim", dependencies: ["CMosquitto"]),
        // An MQTT client: libmosquitto's network thread, its reports handed to one closure.
        .target(name: "VendMQTT", dependencies: ["CMosquittoShim"]),
        // The fleet's messages and topic tree, shared by vendd and vendfleet. Pure.
        .target(name: "VendTelemetry"),
        // A service's ties to systemd: sd_notify (READY, STOPPING, WATCHDOG) and journald's native
        // log socket behind a lane of its own. Shared by vendd and vendstore, without vendd's devices.
        .target(name: "VendSystemd", dependencies: ["VendPOSIX", .product(name: "Logging", package: "swift-log")]),
        // The shell: config → drivers → core, persistence, control socket, systemd, journald, signals.
        .target(
            name: "VendDaemon",
            dependencies: [
                "VendSystemd", "VendingCore", "VendConfig", "VendSettings", "VendHardware", "VendDrivers", "VendGPIO", "VendStore",
                "VendControl", "VendPOSIX", "VendPollServer", "VendTime", "VendMQTT", "VendTelemetry", "VendDEX", "SimulatedMDB", "MDB",
                "VendClimate", "VendSensors",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The daemon's executable: argument parsing and wiring only.
        .executableTarget(
            name: "vendd",
            dependencies: [
                "VendConfig", "VendDaemon", "VendControl", "VendPOSIX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // The technician's tool.
        .executableTarget(
            name: "vendctl",
            dependencies: [
                "VendControl", "VendPOSIX", "VendingCore", "VendText", "VendReports", "VendDEX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // What the customer sees, without I/O of its own: the machine as followed over the control
        // socket, the words for it (ko/en), the character LCD's frames and its HD44780/PCF8574 bytes.
        .target(name: "VendDisplay", dependencies: ["VendControl", "VendConfig", "VendingCore", "VendReports", "VendPOSIX"]),
        // HTTP for the kiosk and the back office on libmicrohttpd (CMicroHTTPDShim): requests
        // whole, handlers on its thread or one of their own, server-sent event streams, a router.
        // No NIO and no Foundation: it builds with Debian's Swift 6.0.3 too.
        .target(name: "VendHTTP", dependencies: ["CMicroHTTPDShim", "VendPOSIX"]),
        // The kiosk page and its server-sent events, served by VendHTTP on loopback by default.
        .target(
            name: "VendKiosk",
            dependencies: ["VendDisplay", "VendControl", "VendConfig", "VendText", "VendReports", "VendHTTP", "VendPOSIX"]),
        // The display process: follows vendd over the control socket; never touches money.
        .executableTarget(
            name: "vendd-display",
            dependencies: [
                "VendDisplay", "VendKiosk", "VendHTTP", "VendConfig", "VendControl", "VendPOSIX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // The fleet console: subscribes to the broker and prints every machine.
        .executableTarget(
            name: "vendfleet",
            dependencies: [
                "VendMQTT", "VendTelemetry", "VendConfig", "VendText", "VendReports", "VendingCore", "VendPOSIX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // The fleet store's engines as installed: SQLite (libsqlite3-dev) and PostgreSQL's client
        // (libpq-dev). Only the fleet store depends on them: vendd builds without either.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPostgreSQL", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // Every machine's events exactly once, by (machine, seq), and its latest retained
        // messages: one schema with versioned migrations, on SQLite or PostgreSQL.
        .target(name: "VendFleetStore", dependencies: ["CSQLite", "CPostgreSQL"]),
        // From the broker to the store: topics and payloads checked, batches committed, then
        // each machine's `stored` acknowledgement published.
        .target(
            name: "VendFleetIngest",
            dependencies: [
                "VendFleetStore", "VendMQTT", "VendPOSIX", "VendTelemetry", "VendingCore", .product(name: "Logging", package: "swift-log"),
            ]),
        // libmicrohttpd as installed (Debian libmicrohttpd-dev: 0.9.75 in 12, 1.0.1 in 13), and one
        // small C API over it for VendHTTP: a request reaches Swift once, whole (its start and
        // queries are varargs), answered at once or later from another thread, or as a stream.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"]),
        // libsodium as installed (Debian libsodium-dev): Argon2id password hashes, random tokens.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // The operator's back office, served by vendstore: users and roles, sessions, the fleet
        // page, routes and their pick lists, from the fleet store's database.
        .target(
            name: "VendOffice",
            dependencies: [
                "VendHTTP", "CSodium", "VendConfig", "VendControl", "VendFleetIngest", "VendFleetStore", "VendingCore", "VendReports",
                "VendTelemetry", "VendText", "VendPOSIX", .product(name: "Logging", package: "swift-log"),
            ]),
        // The fleet store's daemon and its `status`.
        .executableTarget(
            name: "vendstore",
            dependencies: [
                "VendFleetIngest", "VendFleetStore", "VendOffice", "VendConfig", "VendControl", "VendMQTT", "VendSystemd", "VendText", "VendPOSIX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Simulated machines publishing vendd's events with sequences, and resending what the
        // store has not acknowledged, as vendd does: for the benchmark and the chaos test.
        .executableTarget(
            name: "vendstore-load",
            dependencies: ["VendMQTT", "VendPOSIX", "VendTelemetry", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .testTarget(
            name: "VendFleetStoreTests",
            dependencies: [
                "VendFleetStore", "VendFleetIngest", "VendOffice", "VendMQTT", "VendPOSIX", "VendTelemetry", "VenddTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "VendDisplayTests", dependencies: ["VendDisplay", "VendConfig", "VendControl", "VendPOSIX", "VendingCore", "VenddTestSupport"]),
        .testTarget(name: "VendHTTPTests", dependencies: ["VendHTTP", "VendPOSIX"]),
        .testTarget(name: "VendPollServerTests", dependencies: ["VendPollServer", "VendPOSIX", "VendTime", "VenddTestSupport"]),
        .testTarget(name: "VendingCoreTests", dependencies: ["VendingCore", "VenddTestSupport"]),
        .testTarget(name: "VendClimateTests", dependencies: ["VendClimate", "VendingCore", "VenddTestSupport"]),
        .testTarget(name: "VendSensorsTests", dependencies: ["VendSensors", "VendingCore", "VenddTestSupport"]),
        // Paths and temporary directories shared by the test targets.
        .target(name: "VenddTestSupport", dependencies: ["VendPOSIX"], path: "Tests/VenddTestSupport"),
        .testTarget(name: "VendConfigTests", dependencies: ["VendConfig", "VendingCore", "VenddTestSupport"]),
        .testTarget(name: "VendStoreTests", dependencies: ["VendStore"]),
        .testTarget(name: "VendYAMLTests", dependencies: ["VendYAML"]),
        .testTarget(
            name: "VendHardwareTests",
            dependencies: [
                "VendHardware", "VendDrivers", "VendConfig", "VendTime", "VendingCore", "CcTalk", "CcTalkSimulator", "MDB", "MDBSocketSimulator",
                "SimulatedMDB", "VendSettings", "VendSerial",
            ]),
        .testTarget(name: "VendGPIOTests", dependencies: ["VendGPIO", "VendHardware", "VenddTestSupport"]),
        .testTarget(name: "CcTalkTests", dependencies: ["CcTalk"]),
        .testTarget(name: "MDBTests", dependencies: ["MDB", "MDBSocketSimulator", "SimulatedMDB"]),
        // The simulated MDB devices (SimulatedMDB: a Qibixx interface, changer, bill validator and
        // card readers written from the spec, with faults on demand) on a Unix socket file.
        .target(name: "MDBSocketSimulator", dependencies: ["MDB", "SimulatedMDB", "VendPOSIX", "SocketPlug"], path: "Tests/MDBSocketSimulator"),
        // `mdb-sim --socket PATH`: the simulator driven from stdin, for process tests and by hand.
        .executableTarget(
            name: "mdb-sim", dependencies: ["MDB", "MDBSocketSimulator", "SimulatedMDB", "VendPOSIX", "SocketPlug"], path: "Tests/mdb-sim"),
        // A ccTalk coin acceptor written from the spec, listening on a Unix socket, with faults on demand.
        .target(name: "CcTalkSimulator", dependencies: ["CcTalk", "VendPOSIX", "SocketPlug"], path: "Tests/CcTalkSimulator"),
        // The device end of a simulated serial link on a Unix socket, shared by the simulators,
        // and their executables' command line and output.
        .target(name: "SocketPlug", dependencies: ["VendPOSIX"], path: "Tests/SocketPlug"),
        // `cctalk-sim --socket PATH`: the simulator driven from stdin, for the HIL harness.
        .executableTarget(name: "cctalk-sim", dependencies: ["CcTalk", "CcTalkSimulator", "VendPOSIX", "SocketPlug"], path: "Tests/cctalk-sim"),
        .testTarget(name: "VendReportsTests", dependencies: ["VendReports"]),
        .testTarget(
            name: "VendDEXTests",
            dependencies: ["VendDEX", "DEXHandheld", "VendDrivers", "VendSettings", "VendTime", "VendPOSIX", "VenddTestSupport"]),
        // A route driver's DEX handheld written from EVA-DTS chapter 4 and a DDCMP master written
        // from chapter 3 (not from VendDEX), on a Unix socket, with faults on demand.
        .target(name: "DEXHandheld", dependencies: ["VendPOSIX", "SocketPlug"], path: "Tests/DEXHandheld"),
        // `dex-handheld --socket PATH`: those handhelds driven from stdin, for the HIL harness.
        .executableTarget(name: "dex-handheld", dependencies: ["DEXHandheld", "VendPOSIX", "SocketPlug"], path: "Tests/dex-handheld"),
        // libFuzzer harnesses (docs/fuzzing.md): a normal build replays the files it is given;
        // scripts/fuzz builds them with -DFUZZING and the fuzzer and address sanitizers.
        .systemLibrary(name: "CLibFuzzer", path: "Tests/Fuzz/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Tests/Fuzz/FuzzSupport"),
        .executableTarget(name: "fuzz-config", dependencies: ["FuzzSupport", "VendConfig"], path: "Tests/Fuzz/fuzz-config"),
        .executableTarget(name: "fuzz-cctalk", dependencies: ["FuzzSupport", "CcTalk"], path: "Tests/Fuzz/fuzz-cctalk"),
        .executableTarget(name: "fuzz-control", dependencies: ["FuzzSupport", "VendControl"], path: "Tests/Fuzz/fuzz-control"),
        .executableTarget(name: "fuzz-mdb", dependencies: ["FuzzSupport", "MDB"], path: "Tests/Fuzz/fuzz-mdb"),
        .executableTarget(name: "fuzz-dex", dependencies: ["FuzzSupport", "VendDEX"], path: "Tests/Fuzz/fuzz-dex"),
        .executableTarget(name: "fuzz-ddcmp", dependencies: ["FuzzSupport", "VendDEX"], path: "Tests/Fuzz/fuzz-ddcmp"),
        .testTarget(
            name: "VendDaemonTests",
            dependencies: [
                "VendTelemetry", "VendStore",
                "VendDaemon", "VendSystemd", "VendControl", "VendConfig", "VendHardware", "VendPOSIX", "VendTime", "VendingCore", "VenddTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The real vendd and vendctl binaries, driven as a technician would.
        .testTarget(
            name: "VenddProcessTests",
            dependencies: [
                "VendControl", "VendPOSIX", "VendingCore", "VenddTestSupport", "CcTalkSimulator", "MDBSocketSimulator", "SimulatedMDB",
                "VendTelemetry", "DEXHandheld", "VendDEX", "VendFleetStore",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// Release builds optimise for size, except the fleet store's ingest path. vendd and its tools
// spend their time waiting on devices, storage and sockets, not computing; their code's size is
// resident memory and flash on a board (issue 36: -Osize took vendd's text from 4.6 to 3.9 MB and
// its RSS from 21.6 to 21.0 MiB). vendstore's ingest is held to a throughput goal
// (docs/fleet-store.md), so its modules keep -O.
let ingestPathTargets: Set<String> = ["VendFleetStore", "VendFleetIngest", "vendstore", "vendstore-load"]
for target in package.targets where target.type != .system && !ingestPathTargets.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Osize"], .when(configuration: .release))]
}
