import Testing
import VendConfig

@Suite struct MQTTConfigTests {
    static let section = """
        mqtt:
          broker: mqtts://[::1]:18883
          machine_id: corridor-b.2
          ca_file: /etc/vendd/fleet-ca.pem
          topic_prefix: acme/vending
          publish: [events, state]
          commands: [report]
          outbox_days: 7
          keep_until_stored: true

        """

    @Test func aValidSectionGivesEverySetting() throws {
        let config = try ConfigLoader.parse(BadConfigTests.base + Self.section, file: "test.yaml")
        let mqtt = try #require(config.mqtt)
        #expect(mqtt.broker == MQTTSettings.Broker(host: "::1", port: 18883, tls: true))
        #expect(mqtt.broker.url == "mqtts://[::1]:18883")
        #expect(mqtt.machineTopic == "acme/vending/corridor-b.2")
        #expect(mqtt.publish == [.events, .state])
        #expect(mqtt.commands == [.report])
        #expect(mqtt.outboxDays == 7)
        #expect(mqtt.keepUntilStored)
        #expect(mqtt.credentialsFile == nil)
        #expect(config.summary.hasSuffix("\nmqtt      mqtts://[::1]:18883 as acme/vending/corridor-b.2; publishes events, state; commands: report"))
    }

    @Test func theResolvedFileReadsBackToTheSameSettings() throws {
        let config = try ConfigLoader.parse(BadConfigTests.base + Self.section, file: "test.yaml")
        let again = try ConfigLoader.parse(config.resolvedYAML, file: "resolved.yaml")
        #expect(again.mqtt == config.mqtt)
    }

    @Test func withoutTheSectionThereIsNoFleetLink() throws {
        #expect(try ConfigLoader.parse(BadConfigTests.base, file: "test.yaml").mqtt == nil)
    }

    @Test func defaultsPublishEverythingAndAllowNoCommand() throws {
        let text = BadConfigTests.base + "mqtt:\n  broker: mqtt://10.0.0.5\n  allow_plaintext: true\n  machine_id: m1\n"
        let mqtt = try #require(try ConfigLoader.parse(text, file: "test.yaml").mqtt)
        #expect(mqtt.broker == MQTTSettings.Broker(host: "10.0.0.5", port: 1883, tls: false))
        #expect(mqtt.publish == Set(MQTTSettings.Publication.allCases))
        #expect(mqtt.commands.isEmpty)
        #expect(mqtt.topicPrefix == "vendd")
        #expect(mqtt.outboxDays == 30)
        #expect(!mqtt.keepUntilStored, "without the key an event leaves the outbox on the broker's PUBACK")
    }

    @Test(arguments: ["mqtts://", "mqtts://host:0", "mqtts://host:99999", "mqtts://user@host", "tcp://host", "mqtts://host/path"])
    func brokerURLsThatAreRefused(_ url: String) {
        #expect(MQTTSettings.Broker(url: url) == nil)
    }
}
