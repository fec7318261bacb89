import Foundation
import Testing
import VendConfig
import VenddTestSupport
import VendingCore

/// vendstore's file: the keys vendstore(8) lists (`StoreConfigLoader.keys`) are the ones
/// docs/fleet-store.md documents and the ones the parser takes, with the same defaults.
@Suite struct StoreConfigTests {
    @Test func theManPageListsTheDocumentedKeysAndDefaults() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/fleet-store.md"), encoding: .utf8)
        // The configuration table's rows: | `section.key` | default | meaning |
        let documented = text.split(separator: "\n").compactMap { line -> String? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5, cells[1].hasPrefix("`"), cells[1].contains(".") else { return nil }
            return "\(cells[1]) \(cells[2])".replacingOccurrences(of: "`", with: "")
        }
        #expect(documented == StoreConfigLoader.keys.map { "\($0.key) \($0.default)" })
    }

    @Test func everyListedKeyIsTakenAndTheDefaultsAreTheListedOnes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let credentials = directory.url.appendingPathComponent("credentials").path
        try "vendstore:secret\n".write(toFile: credentials, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: credentials)
        let every = """
            mqtt:
              broker: mqtts://fleet.example.com:8883
              allow_plaintext: false
              ca_file: /etc/ssl/certs/fleet-ca.pem
              credentials_file: \(credentials)
              client_id: store-1
              session_expiry_hours: 24
              topic_prefix: fleet/north
              shared_group: ingest
            database:
              postgresql: "host=/run/postgresql dbname=fleet"
            ingest:
              batch_events: 100
              batch_milliseconds: 5
              ack_milliseconds: 50
              max_sequence_ahead: 1000
              buffer_events: 5000
            office:
              listen: 0.0.0.0:8090
              tls_proxy: true
              plain_http_beyond_loopback: true
              session_hours: 8
              outbox_alert_events: 500
              dex_alert_days: 7
              currencies:
                - code: EUR
                  format: "{amount} €"
                  grouping_separator: "."
                  decimal_separator: ","
            """
        let settings = try StoreConfigLoader.parse(every, file: "every.yaml")
        #expect(settings.database == .postgresql(conninfo: "host=/run/postgresql dbname=fleet"))
        #expect(settings.sharedGroup == "ingest" && settings.bufferEvents == 5000 && settings.sessionExpirySeconds == 24 * 3600)
        #expect(
            settings.office
                == OfficeSettings(
                    address: "0.0.0.0", port: 8090, tlsProxy: true, plainHTTPBeyondLoopback: true, sessionHours: 8,
                    currencies: ["EUR": MoneyFormat(template: "{amount} €", groupingSeparator: ".", decimalSeparator: ",")!],
                    outboxAlertEvents: 500, dexAlertDays: 7))
        // One line a listed key, but database.sqlite: a file names one engine.
        let leaves = every.split(separator: "\n").filter { !$0.hasSuffix(":") }.count
        #expect(leaves == StoreConfigLoader.keys.count - 1)

        let least = try StoreConfigLoader.parse("mqtt:\n  broker: mqtt://127.0.0.1:1883\n  allow_plaintext: true\n", file: "least.yaml")
        let defaults = Dictionary(uniqueKeysWithValues: StoreConfigLoader.keys.map { ($0.key, $0.default) })
        #expect(least.database == .sqlite(path: defaults["database.sqlite"] ?? ""))
        #expect(least.clientID == defaults["mqtt.client_id"])
        #expect(least.topicPrefix == defaults["mqtt.topic_prefix"])
        #expect("\(least.sessionExpirySeconds / 3600)" == defaults["mqtt.session_expiry_hours"])
        #expect("\(least.batchEvents)" == defaults["ingest.batch_events"])
        #expect("\(least.batchMilliseconds)" == defaults["ingest.batch_milliseconds"])
        #expect("\(least.ackMilliseconds)" == defaults["ingest.ack_milliseconds"])
        #expect("\(least.maxSequenceAhead)" == defaults["ingest.max_sequence_ahead"])
        #expect("\(least.bufferEvents)" == defaults["ingest.buffer_events"])
        #expect(least.office == nil)
        let office = try StoreConfigLoader.parse(
            "mqtt:\n  broker: mqtt://127.0.0.1:1883\n  allow_plaintext: true\noffice:\n  currencies: []\n", file: "office.yaml")
        #expect("\(office.office?.address ?? ""):\(office.office?.port ?? 0)" == defaults["office.listen"])
        #expect("\(office.office?.sessionHours ?? 0)" == defaults["office.session_hours"])
        #expect(office.office?.tlsProxy == false && office.office?.plainHTTPBeyondLoopback == false)
        #expect("\(office.office?.outboxAlertEvents ?? 0)" == defaults["office.outbox_alert_events"])
        #expect("\(office.office?.dexAlertDays ?? 0)" == defaults["office.dex_alert_days"])
    }

    /// The back office never listens beyond loopback on plain HTTP unless the file says so.
    @Test(arguments: [
        ("0.0.0.0:8090", "office.yaml:5:11: office.listen: 0.0.0.0:8090 is beyond loopback and the office speaks plain HTTP"),
        ("'[::]:8090'", "office.yaml:5:11: office.listen: [::]:8090 is beyond loopback"),
        ("localhost:8090", "office.yaml:5:11: office.listen: 'localhost:8090' is not an address and port"),
        ("127.0.0.1:99999", "office.yaml:5:11: office.listen: '127.0.0.1:99999' is not an address and port"),
    ])
    func anOfficeAddressIsRefusedWithItsPlace(_ written: String, _ message: String) {
        let error = #expect(throws: ConfigError.self) {
            try StoreConfigLoader.parse(
                "mqtt:\n  broker: mqtt://127.0.0.1:1883\n  allow_plaintext: true\noffice:\n  listen: \(written)\n", file: "office.yaml")
        }
        #expect(error?.description.hasPrefix(message) == true, "\(String(describing: error))")
    }

    @Test func aCurrencyFormatWithoutItsPlaceholderIsRefused() {
        let error = #expect(throws: ConfigError.self) {
            try StoreConfigLoader.parse(
                "mqtt:\n  broker: mqtt://127.0.0.1:1883\n  allow_plaintext: true\noffice:\n  currencies:\n    - code: KRW\n      format: 원\n",
                file: "office.yaml")
        }
        #expect(
            error?.description.hasPrefix("office.yaml:7:15: office.currencies[KRW].format: '원' must contain {amount} exactly once") == true,
            "\(String(describing: error))")
    }

    @Test func aTypoIsNamedWithItsPlaceAndTheKeyMeant() {
        let error = #expect(throws: ConfigError.self) {
            try StoreConfigLoader.parse(
                "mqtt:\n  broker: mqtt://127.0.0.1:1883\n  allow_plaintext: true\ningest:\n  batch_event: 5\n", file: "typo.yaml")
        }
        #expect(error?.description.hasPrefix("typo.yaml:5:3: ingest: unknown key 'batch_event'; did you mean 'batch_events'?") == true)
    }
}

/// `mqtt.shared_group` is one topic level: vendstore subscribes as `$share/<group>/<prefix>/…`,
/// and a slash or a wildcard would make another filter (or none the broker takes).
@Suite struct StoreSharedGroupConfigTests {
    @Test(arguments: ["stores/a", "'+'", "'#'", "'$share'", "''"])
    func aSharedGroupThatIsNotOneTopicLevelIsRefusedWithItsPlace(_ written: String) {
        let error = #expect(throws: ConfigError.self) {
            try StoreConfigLoader.parse(
                "mqtt:\n  broker: mqtt://127.0.0.1:1883\n  allow_plaintext: true\n  shared_group: \(written)\n", file: "shared.yaml")
        }
        let value = written.trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        #expect(
            error?.description.hasPrefix("shared.yaml:4:17: mqtt.shared_group: '\(value)' must be one topic level") == true,
            "\(String(describing: error))")
    }

    @Test func aSharedGroupIsTaken() throws {
        let settings = try StoreConfigLoader.parse(
            "mqtt:\n  broker: mqtt://127.0.0.1:1883\n  allow_plaintext: true\n  shared_group: stores-1\n", file: "shared.yaml")
        #expect(settings.sharedGroup == "stores-1")
    }
}
