import CMosquittoShim

/// What the broker connection reports, on the client's network thread.
public enum MQTTEvent: Sendable {
    /// CONNACK: nil when accepted, otherwise the broker's reason.
    case connected(refusal: String?)
    case disconnected(reason: String)
    /// PUBACK for a QoS 1 message; `accepted` is false when the broker refused it (MQTT 5
    /// reason code, e.g. not authorised by its ACL).
    case acknowledged(messageID: Int32, accepted: Bool)
    case message(MQTTMessage)
    /// libmosquitto's own warnings and errors: TLS failures, refused sockets.
    case log(String, isError: Bool)
}

public struct MQTTMessage: Sendable {
    public let topic: String
    public let payload: [UInt8]
    /// MQTT 5 request/response: where the sender wants its answer, and what to echo back.
    public let responseTopic: String?
    public let correlation: [UInt8]?
}

public struct MQTTError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// Where and how to connect: `mqtts://host:8883` with a CA, or `mqtt://host:1883` in the clear.
public struct MQTTEndpoint: Sendable, Equatable {
    public let host: String
    public let port: Int
    public let tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    public var url: String { "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// One MQTT 5 connection through libmosquitto. The network thread is the shim's (libmosquitto's
/// own gives up for good on a TLS error); it connects in the background and tries again after
/// every loss or failure.
/// `events` is called on that thread: it must only hand the event over.
public final class MQTTClient: @unchecked Sendable {
    // @unchecked: libmosquitto's calls are thread-safe once the network thread runs; `handle` is
    // set once in init and freed once in deinit.
    private let handle: OpaquePointer
    private let box: Unmanaged<EventBox>

    private final class EventBox {
        let deliver: @Sendable (MQTTEvent) -> Void
        init(_ deliver: @escaping @Sendable (MQTTEvent) -> Void) { self.deliver = deliver }
    }

    public init(clientID: String, cleanStart: Bool, events: @escaping @Sendable (MQTTEvent) -> Void) throws(MQTTError) {
        if let error = vmqtt_load_error() {
            throw MQTTError(description: "cannot load libmosquitto (install the Debian package libmosquitto1): \(String(cString: error))")
        }
        box = Unmanaged.passRetained(EventBox(events))
        var callbacks = vmqtt_callbacks()
        callbacks.context = box.toOpaque()
        callbacks.connected = { context, reason in
            MQTTClient.deliver(context, .connected(refusal: reason == 0 ? nil : String(cString: vmqtt_reason_text(reason))))
        }
        callbacks.disconnected = { context, reason in
            let text = reason == 0 ? "disconnected" : String(cString: vmqtt_error_text(reason))
            MQTTClient.deliver(context, .disconnected(reason: text))
        }
        callbacks.acknowledged = { context, mid, reason in
            MQTTClient.deliver(context, .acknowledged(messageID: mid, accepted: reason < 0x80))
        }
        callbacks.message = { context, topic, payload, length, responseTopic, correlation, correlationLength in
            let bytes = payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            let correlationBytes = correlation.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(correlationLength))) }
            MQTTClient.deliver(
                context,
                .message(
                    MQTTMessage(
                        topic: topic.map { String(cString: $0) } ?? "", payload: bytes,
                        responseTopic: responseTopic.map { String(cString: $0) },
                        correlation: correlationBytes)))
        }
        callbacks.log = { context, isError, text in
            MQTTClient.deliver(context, .log(text.map { String(cString: $0) } ?? "", isError: isError != 0))
        }
        guard let handle = vmqtt_new(clientID, cleanStart ? 1 : 0, &callbacks) else {
            box.release()
            throw MQTTError(description: "cannot create an MQTT client (libmosquitto: out of memory?)")
        }
        self.handle = handle
    }

    private static func deliver(_ context: UnsafeMutableRawPointer?, _ event: MQTTEvent) {
        guard let context else { return }
        Unmanaged<EventBox>.fromOpaque(context).takeUnretainedValue().deliver(event)
    }

    deinit {
        vmqtt_destroy(handle)
        box.release()
    }

    public func setCredentials(username: String, password: String) throws(MQTTError) {
        try check(vmqtt_set_credentials(handle, username, password), "credentials")
    }

    public func setTLS(caFile: String) throws(MQTTError) {
        try check(vmqtt_set_tls(handle, caFile), "TLS with CA file \(caFile)")
    }

    public func setWill(topic: String, payload: [UInt8], retain: Bool) throws(MQTTError) {
        try check(vmqtt_set_will(handle, topic, payload, Int32(payload.count), 1, retain ? 1 : 0), "last will")
    }

    /// With `sessionExpirySeconds` > 0 (and `cleanStart` false) the broker keeps the session
    /// that long after a disconnection: subscriptions, and the QoS 1 messages that arrive meanwhile.
    public func start(_ endpoint: MQTTEndpoint, keepAliveSeconds: Int32 = 30, sessionExpirySeconds: UInt32 = 0) throws(MQTTError) {
        try check(
            vmqtt_start_session(handle, endpoint.host, Int32(endpoint.port), keepAliveSeconds, sessionExpirySeconds),
            "connecting to \(endpoint.url)")
    }

    /// Queues a message and returns its id; throws when not connected.
    @discardableResult
    public func publish(_ topic: String, _ payload: [UInt8], qos: Int32 = 1, retain: Bool = false) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        try check(vmqtt_publish(handle, topic, payload, Int32(payload.count), qos, retain ? 1 : 0, &mid), "publishing on \(topic)")
        return mid
    }

    public func reply(_ topic: String, _ payload: [UInt8], correlation: [UInt8]?) throws(MQTTError) {
        let status =
            correlation.map { bytes in
                vmqtt_reply(handle, topic, payload, Int32(payload.count), bytes, Int32(bytes.count))
            } ?? vmqtt_reply(handle, topic, payload, Int32(payload.count), nil, 0)
        try check(status, "replying on \(topic)")
    }

    /// An MQTT 5 request at QoS 1 (the answer wanted on `responseTopic` with `correlation`),
    /// dropped by the broker if undelivered after `expirySeconds`; returns its message id.
    @discardableResult
    public func request(_ topic: String, _ payload: [UInt8], responseTopic: String, correlation: [UInt8], expirySeconds: UInt32) throws(MQTTError)
        -> Int32
    {
        var mid: Int32 = 0
        let status = vmqtt_request(
            handle, topic, payload, Int32(payload.count), responseTopic, correlation, Int32(correlation.count), expirySeconds, &mid)
        try check(status, "publishing on \(topic)")
        return mid
    }

    public func subscribe(_ pattern: String, qos: Int32 = 1) throws(MQTTError) {
        try check(vmqtt_subscribe(handle, pattern, qos), "subscribing to \(pattern)")
    }

    /// A clean disconnect (the broker keeps the last will unsent) and the network thread joined.
    public func stop() {
        vmqtt_stop(handle)
    }

    private func check(_ status: Int32, _ what: String) throws(MQTTError) {
        guard status == 0 else { throw MQTTError(description: "\(what): \(String(cString: vmqtt_error_text(status)))") }
    }
}
