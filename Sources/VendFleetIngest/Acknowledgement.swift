import FoundationEssentials
import VendTelemetry

/// The retained `stored` payload, VendTelemetry's `StoredAcknowledgement` as vendd decodes it:
/// `{"seq": N, "at": <milliseconds since the epoch>}`, N the highest contiguous sequence of the
/// machine durable in the store.
enum Acknowledgement {
    static func payload(seq: Int64, at milliseconds: Int64) -> [UInt8] {
        let acknowledgement = StoredAcknowledgement(seq: UInt64(max(seq, 0)), at: milliseconds)
        // Encoding two integers cannot fail.
        return (try? Array(JSONEncoder().encode(acknowledgement))) ?? Array("{\"seq\":\(acknowledgement.seq)}".utf8)
    }
}
