// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vendd",
    products: [
        .library(name: "VendingCore", targets: ["VendingCore"]),
    ],
    targets: [
        // Pure model of the machine: money, catalog, stock, the vend state machine. No I/O, no C.
        .target(name: "VendingCore"),
        .testTarget(name: "VendingCoreTests", dependencies: ["VendingCore"]),
    ],
    swiftLanguageModes: [.v6]
)
