/// Which `stored` acknowledgements are due. Acks are coalesced (each machine's latest, at most
/// once per interval) because a busy fleet commits a machine in nearly every batch and each ack
/// is a retained write at the broker; one is sent again whenever it may not be there any more.
struct AckBoard {
    private var pending: [String: Int64] = [:]
    private var published: [String: Int64] = [:]

    mutating func record(_ acknowledgements: [String: Int64]) {
        for (machine, seq) in acknowledgements where published[machine] != seq { pending[machine] = seq }
    }

    /// After a reconnection the broker may be a new one without our retained messages (or have
    /// lost them): every machine's next ack is sent again.
    mutating func forgetPublished() { published = [:] }

    var due: [(machine: String, seq: Int64)] { pending.map { ($0.key, $0.value) } }

    mutating func sent(_ machine: String, _ seq: Int64) {
        published[machine] = seq
        if pending[machine] == seq { pending[machine] = nil }
    }
}
