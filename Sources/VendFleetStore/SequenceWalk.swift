/// A machine's sequence position as stored in `machine_progress`.
struct SequenceState: Equatable {
    var contiguous: Int64 = 0
    var highest: Int64 = 0

    var hasGap: Bool { highest > contiguous }
}

/// The pure part of a commit: which events of a batch go to the database, and where each
/// machine's sequence stands afterwards. Both engines run it; only the SQL differs.
enum SequenceWalk {
    struct Admission {
        var admitted: [IncomingEvent] = []
        var duplicates = 0
        var conflicts: [EventConflict] = []
        var refused: [RefusedEvent] = []
    }

    /// Keeps the first copy of each (machine, seq) in the batch (a later copy is a duplicate, or
    /// a conflict under another id) and refuses sequences more than `maxAhead` past the
    /// machine's contiguous mark: a sequence from the future would open a gap nobody can fill.
    static func admit(_ events: [IncomingEvent], states: [String: SequenceState], maxAhead: Int64) -> Admission {
        var result = Admission()
        var firstID: [EventKey: String] = [:]
        for event in events {
            let contiguous = states[event.machine]?.contiguous ?? 0
            if event.seq > contiguous &+ maxAhead {
                result.refused.append(
                    RefusedEvent(
                        event: event,
                        reason: "sequence \(event.seq) is more than \(maxAhead) past the stored \(contiguous) (a sequence from the future)"))
                continue
            }
            if let id = firstID[event.key] {
                if id == event.id {
                    result.duplicates += 1
                } else {
                    result.conflicts.append(EventConflict(machine: event.machine, seq: event.seq, storedID: id, offeredID: event.id))
                }
                continue
            }
            firstID[event.key] = event.id
            result.admitted.append(event)
        }
        return result
    }

    /// Advances `state` over `heldAbove` (every sequence held above its contiguous mark, sorted)
    /// and returns the new state with the gaps still open.
    static func advance(_ state: SequenceState, heldAbove: [Int64]) -> (SequenceState, gaps: [ClosedRange<Int64>]) {
        var next = state
        var gaps: [ClosedRange<Int64>] = []
        var previous = state.contiguous
        for seq in heldAbove where seq > previous {
            if seq > previous + 1 {
                gaps.append((previous + 1)...(seq - 1))
            } else if gaps.isEmpty {
                next.contiguous = seq
            }
            previous = seq
        }
        next.highest = max(state.highest, previous)
        return (next, gaps)
    }
}
