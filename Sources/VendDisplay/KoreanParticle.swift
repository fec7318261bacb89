/// The Korean particles whose form follows the sound before them: 을/를 (object), 이/가
/// (subject), 은/는 (topic), 과/와 (and). The first form follows a final consonant (batchim),
/// the second a vowel: "우유를", "빵을".
///
/// The rule, from the last character of the word (trailing spaces aside):
/// - a Hangul syllable: its own final consonant decides ("바나나우유" → 를, "콘칩" → 을);
/// - a digit: its Sino-Korean reading decides — 영 일 삼 육 칠 팔 end in a consonant, 이 사 오 구
///   do not. An amount ending in 0 is read with a unit (십, 백, 천, 만) that ends in one too, so
///   "₩1,500" takes 을 either way;
/// - anything else (a Latin letter, a bracket, a symbol): no choice is made. A Latin name is read
///   as a word ("Milk" is 밀크, "Corn" is 콘), which its spelling does not tell, so the sentence is
///   phrased without a particle after it instead (`DisplayTexts` does).
public enum KoreanParticle: Sendable, CaseIterable {
    case object, subject, topic, and

    /// The particle's two forms: after a final consonant, after a vowel.
    var forms: (consonant: String, vowel: String) {
        switch self {
        case .object: ("을", "를")
        case .subject: ("이", "가")
        case .topic: ("은", "는")
        case .and: ("과", "와")
        }
    }

    /// `word` followed by the particle ("콜라" → "콜라를"); nil when the word's last sound cannot
    /// be told from its spelling.
    public func after(_ word: String) -> String? {
        guard let ending = Self.endsInConsonant(word) else { return nil }
        return word + (ending ? forms.consonant : forms.vowel)
    }

    /// Whether `word` is read with a final consonant; nil when its spelling does not say.
    static func endsInConsonant(_ word: String) -> Bool? {
        guard let last = word.unicodeScalars.last(where: { $0 != " " }) else { return nil }
        switch last.value {
        case 0xAC00...0xD7A3:
            // Precomposed syllables: 28 finals per initial and vowel, the first of them none.
            return (last.value - 0xAC00) % 28 != 0
        case 0x30...0x39:
            // 영 일 이 삼 사 오 육 칠 팔 구
            return [true, true, false, true, false, false, true, true, true, false][Int(last.value - 0x30)]
        default:
            return nil
        }
    }
}
