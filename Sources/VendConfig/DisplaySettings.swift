/// The `display:` section: what the display process (`vendd-display`) shows, and where. vendd
/// itself ignores it; it lives in the technician's file so one file describes the whole machine.
public struct DisplaySettings: Sendable, Equatable {
    public enum Language: String, Sendable, CaseIterable {
        case ko, en
    }

    /// The kiosk page's HTTP listener. Loopback by default: the browser runs on the machine.
    public struct Kiosk: Sendable, Equatable {
        public let address: String
        public let port: Int

        public init(address: String, port: Int) {
            self.address = address
            self.port = port
        }
    }

    /// An HD44780 character LCD behind a PCF8574 I2C backpack.
    public struct LCD: Sendable, Equatable {
        public enum Size: String, Sendable, CaseIterable {
            case size16x2 = "16x2"
            case size20x4 = "20x4"

            public var columns: Int { self == .size16x2 ? 16 : 20 }
            public var rows: Int { self == .size16x2 ? 2 : 4 }
        }

        /// An i2c-dev node, e.g. /dev/i2c-1.
        public let bus: String
        /// The backpack's 7-bit address: 0x27 (PCF8574) or 0x3F (PCF8574A) as shipped.
        public let address: Int
        public let size: Size

        public init(bus: String, address: Int, size: Size) {
            self.bus = bus
            self.address = address
            self.size = size
        }
    }

    public let language: Language
    /// Nil when the section has `kiosk: off`.
    public let kiosk: Kiosk?
    public let lcd: LCD?

    public init(language: Language, kiosk: Kiosk?, lcd: LCD?) {
        self.language = language
        self.kiosk = kiosk
        self.lcd = lcd
    }
}

/// What the display shows of a product beyond its name: the kiosk's picture and the LCD's ASCII
/// name. Keyed by product id in `VenddConfig.productFaces`.
public struct ProductFace: Sendable, Equatable {
    /// An absolute path (relative paths in the file are resolved against its directory).
    public let picture: String?
    /// Printable ASCII for the LCD's character ROM; nil when the name itself is.
    public let shortName: String?

    public init(picture: String?, shortName: String?) {
        self.picture = picture
        self.shortName = shortName
    }
}
