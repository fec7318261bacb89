/// "Did you mean …?" for a misspelt key or name: the closest candidate, if it is close enough
/// to be a typo rather than a different word.
public func closestMatch(to word: String, among candidates: [String]) -> String? {
    // A dropped unit suffix ("pulse" for "pulse_ms") is a near miss whatever the distance.
    if word.count >= 4, let extended = candidates.first(where: { $0.hasPrefix(word + "_") }) { return extended }
    let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
    let tolerance = max(1, min(3, word.count / 3))
    return best.1 <= tolerance ? best.0 : nil
}

/// Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbours
/// as one edit (optimal string alignment): "gpoi" is one edit from "gpio".
public func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var distance = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { distance[i][0] = i }
    for j in 0...b.count { distance[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            distance[i][j] = min(distance[i - 1][j] + 1, distance[i][j - 1] + 1, distance[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                distance[i][j] = min(distance[i][j], distance[i - 2][j - 2] + 1)
            }
        }
    }
    return distance[a.count][b.count]
}
