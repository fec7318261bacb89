/// Several events in one message on `<prefix>/<machine>/backlog`: each event's payload exactly
/// as on its own topic, one per line (JSON Lines). An encoded event never holds a raw line feed
/// (JSON escapes it inside strings), so a line is an event.
///
/// Why: after an outage a machine's outbox holds hundreds of events, and per MQTT message the
/// broker, the store and the machine each pay a PUBLISH and a PUBACK (two system calls, a TCP
/// segment each way); in one message of up to `maxEvents` they pay them once.
public enum EventBatch {
    public static let maxEvents = 100
    /// Small enough for a slow cellular link to carry in a few seconds.
    public static let maxBytes = 64 * 1024

    /// Consecutive runs of `payloads`, in order, of at most `maxEvents` payloads and `maxBytes`
    /// bytes each (a single payload longer than that is a run of its own).
    public static func runs<Payloads: Collection>(
        of payloads: Payloads, maxEvents: Int = maxEvents, maxBytes: Int = maxBytes
    ) -> [Range<Int>] where Payloads.Element == [UInt8] {
        var runs: [Range<Int>] = []
        var start = 0
        var bytes = 0
        for (index, payload) in payloads.enumerated() {
            let added = payload.count + (index > start ? 1 : 0)
            if index > start, index - start == maxEvents || bytes + added > maxBytes {
                runs.append(start..<index)
                start = index
                bytes = payload.count
            } else {
                bytes += added
            }
        }
        if start < payloads.count { runs.append(start..<payloads.count) }
        return runs
    }

    /// One message's payload: the events' payloads joined by line feeds.
    public static func payload<Payloads: Sequence>(_ payloads: Payloads) -> [UInt8] where Payloads.Element == [UInt8] {
        var joined: [UInt8] = []
        for payload in payloads {
            if !joined.isEmpty { joined.append(lineFeed) }
            joined += payload
        }
        return joined
    }

    /// The events' payloads in a message, in order (empty lines, as a trailing line feed leaves, skipped).
    public static func events(in payload: [UInt8]) -> [ArraySlice<UInt8>] {
        payload.split(separator: lineFeed, omittingEmptySubsequences: true)
    }

    private static let lineFeed = UInt8(ascii: "\n")
}
