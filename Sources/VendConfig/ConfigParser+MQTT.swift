import VendYAML

#if canImport(Glibc)
    import Glibc
#endif

extension ConfigParser {
    /// `mqtt:`: the fleet link. TLS unless plaintext is explicitly allowed; credentials in a file
    /// only vendd's user may read.
    func parseMQTT(_ section: MappingReader) -> MQTTSettings? {
        let connection = parseBrokerConnection(section)
        let machineID = section.string("machine_id")
        let publish = choices("publish", in: section, default: Set(MQTTSettings.Publication.allCases))
        let commands = choices("commands", in: section, default: Set<MQTTSettings.Command>())
        let outboxDays = section.int("outbox_days", in: 1...366, default: Defaults.mqttOutboxDays)
        let keepUntilStored = section.bool("keep_until_stored", default: false)
        section.finish()

        if let machineID, !Self.isTopicLevel(machineID) {
            sink.report(
                "'\(machineID)' is not a machine id (letters, digits, '-', '_' and '.'; it is one topic level)",
                at: section.value("machine_id"), path: section.path.key("machine_id"))
        }
        guard let connection, let machineID, Self.isTopicLevel(machineID), let publish, let commands, let outboxDays,
            let keepUntilStored
        else { return nil }
        return MQTTSettings(
            broker: connection.broker, machineID: machineID, credentialsFile: connection.credentialsFile, caFile: connection.caFile,
            topicPrefix: connection.topicPrefix,
            publish: publish, commands: commands, outboxDays: outboxDays, keepUntilStored: keepUntilStored)
    }

    /// The broker keys vendd and vendstore share: `broker`, `allow_plaintext`, `credentials_file`,
    /// `ca_file` and `topic_prefix`. TLS unless plaintext is explicitly allowed; nil after
    /// reporting what is wrong.
    func parseBrokerConnection(_ section: MappingReader) -> BrokerConnection? {
        let url = section.string("broker")
        let allowPlaintext = section.bool("allow_plaintext", default: false)
        let credentialsFile = section.string("credentials_file", required: false)
        let caFile = section.string("ca_file", required: false)
        let prefix = section.string("topic_prefix", required: false) ?? Defaults.mqttTopicPrefix

        var broker: MQTTSettings.Broker?
        if let url {
            broker = MQTTSettings.Broker(url: url)
            if broker == nil {
                sink.report(
                    "'\(url)' is not a broker URL; write mqtts://host:8883 (or mqtt://host:1883 with allow_plaintext: true)",
                    at: section.value("broker"), path: section.path.key("broker"))
            } else if broker?.tls == false, allowPlaintext == false {
                sink.report(
                    "'\(url)' sends credentials and sales in the clear; use mqtts://, or add allow_plaintext: true for a broker on a trusted network",
                    at: section.value("broker"), path: section.path.key("broker"))
                broker = nil
            }
        }
        let prefixIsValid = prefix.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { Self.isTopicLevel(String($0)) }
        if !prefixIsValid {
            sink.report(
                "'\(prefix)' is not a topic prefix (levels of letters, digits, '-', '_' and '.', separated by '/'; no wildcards)",
                at: section.value("topic_prefix"), path: section.path.key("topic_prefix"))
        }
        let credentials = credentialsFile.flatMap { checkPrivateFile($0, key: "credentials_file", in: section) }
        let ca = caFile.flatMap { absolutePath($0, key: "ca_file", in: section) }
        if broker?.tls == true, caFile == nil {
            sink.report(
                "mqtts needs the CA that signed the broker's certificate: add ca_file", at: section.value("broker"),
                path: section.path.key("ca_file"))
        }
        guard let broker, prefixIsValid, credentialsFile == nil || credentials != nil, caFile == nil || ca != nil, broker.tls == false || ca != nil
        else { return nil }
        return BrokerConnection(broker: broker, credentialsFile: credentials, caFile: ca, topicPrefix: prefix)
    }

    private func choices<Choice: RawRepresentable & CaseIterable & Hashable>(
        _ key: String, in section: MappingReader, default defaultValue: Set<Choice>
    ) -> Set<Choice>?
    where Choice.RawValue == String {
        guard let items = section.list(key, required: false) else { return section.has(key) ? nil : defaultValue }
        let parsed = items.enumerated().map { index, node -> Choice? in
            ScalarRules.choice(node, path: section.path.key(key).element("#\(index + 1)"), sink: sink)
        }
        return parsed.contains(where: { $0 == nil }) ? nil : Set(parsed.compactMap { $0 })
    }

    /// A secret file: absolute, present, and neither group- nor world-accessible.
    func checkPrivateFile(_ path: String, key: String, in section: MappingReader) -> String? {
        guard let path = absolutePath(path, key: key, in: section) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else {
            sink.report("'\(path)' cannot be read: \(String(cString: strerror(errno)))", at: section.value(key), path: section.path.key(key))
            return nil
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            sink.report(
                "'\(path)' is readable by others (mode \(String(mode, radix: 8))): it holds the broker password; chmod 600 \(path) and chown it to the user the service runs as (vendd, or vendstore)",
                at: section.value(key), path: section.path.key(key))
            return nil
        }
        return path
    }

    static func isTopicLevel(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }
}

/// Where a service's MQTT client connects, and how.
struct BrokerConnection {
    let broker: MQTTSettings.Broker
    let credentialsFile: String?
    let caFile: String?
    let topicPrefix: String
}
