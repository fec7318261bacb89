// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vendd",
    products: [
        .library(name: "VendingCore", targets: ["VendingCore"]),
        .executable(name: "vendd", targets: ["vendd"]),
        .executable(name: "vendctl", targets: ["vendctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // Pure model of the machine: money, catalog, stock, the vend state machine. No I/O, no C.
        .target(name: "VendingCore"),
        // Aligned terminal tables that count wide (한글) characters right: check-config and vendctl.
        .target(name: "VendText"),
        // The technician's file: YAML read into a node tree, validated with file:line:col errors.
        .target(name: "VendConfig", dependencies: ["VendingCore", "VendText", .product(name: "Yams", package: "Yams")]),
        // Hardware behind protocols: GPIO lines, relays, drop sensors, coin acceptors; the
        // debounce / interlock / pulse logic shared by real and simulated backends; the simulation.
        .target(name: "VendHardware", dependencies: ["VendConfig", "VendingCore"]),
        // Durable state: a write-ahead journal with a checksum per record, snapshots, crash-safe renames.
        .target(name: "VendStore"),
        // The few system calls Swift's Glibc module does not show (they need _GNU_SOURCE).
        .target(name: "CVendSystem"),
        // Pure renderings for vendctl: terminal bar chart, SVG pie chart, EVA-DTS DEX file with its
        // CRC-16, dates as typed. No I/O.
        .target(name: "VendReports"),
        // The control socket's protocol, shared by the daemon and vendctl: versioned JSON lines.
        .target(name: "VendControl", dependencies: ["VendingCore", "CVendSystem"]),
        // The shell: config → drivers → core, persistence, control socket, systemd, journald, signals.
        .target(name: "VendDaemon", dependencies: [
            "VendingCore", "VendConfig", "VendHardware", "VendStore", "VendControl",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The daemon's executable: argument parsing and wiring only.
        .executableTarget(name: "vendd", dependencies: [
            "VendConfig", "VendDaemon",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The technician's tool.
        .executableTarget(name: "vendctl", dependencies: [
            "VendControl", "VendingCore", "VendText", "VendReports",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "VendingCoreTests", dependencies: ["VendingCore", "VenddTestSupport"]),
        // Paths and temporary directories shared by the test targets.
        .target(name: "VenddTestSupport", path: "Tests/VenddTestSupport"),
        .testTarget(name: "VendConfigTests", dependencies: ["VendConfig", "VendingCore", "VenddTestSupport"]),
        .testTarget(name: "VendStoreTests", dependencies: ["VendStore"]),
        .testTarget(name: "VendHardwareTests", dependencies: ["VendHardware", "VendConfig", "VendingCore"]),
        .testTarget(name: "VendReportsTests", dependencies: ["VendReports"]),
        .testTarget(name: "VendDaemonTests", dependencies: [
            "VendDaemon", "VenddTestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        // The real vendd and vendctl binaries, driven as a technician would.
        .testTarget(name: "VenddProcessTests", dependencies: ["VendControl", "VendingCore", "VenddTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
