/// How a machine verifies a customer's age before an age-restricted selection (`age_verification:`).
/// The core needs only how long a check waits; which device signals it is the shell's.
public struct AgeVerificationSetup: Hashable, Sendable, Codable {
    /// How long the verifier has to approve a check, and then how long an approval waits for the
    /// customer's payment and selection.
    public var timeout: Duration { .milliseconds(timeoutMilliseconds) }
    private let timeoutMilliseconds: Int64

    public init(timeout: Duration) {
        timeoutMilliseconds = timeout.wholeMilliseconds
    }
}

/// A customer's age check for one restricted selection: awaited until the verifier signals
/// (approved) or `deadline` passes. An approval is used by the next vend of a slot restricted to
/// at most `age`; it moves no money by itself.
public struct AgeCheck: Hashable, Sendable, Codable {
    /// The selection that asked for it.
    public let slot: SlotID
    /// The age the customer must be shown to have.
    public let age: Int
    public let startedAt: Instant
    /// Until then the verifier may approve; once approved, until then the approval may be used.
    public internal(set) var deadline: Instant
    /// When the verifier approved; nil while awaited.
    public internal(set) var approvedAt: Instant?

    public var isApproved: Bool { approvedAt != nil }

    /// Whether the approval lets a slot restricted to `minimumAge` sell at `now`.
    func allows(minimumAge: Int, at now: Instant) -> Bool {
        isApproved && minimumAge <= age && now < deadline
    }
}

/// Why an age check ended without (or by) a vend.
public enum AgeCheckEnd: String, Hashable, Sendable, Codable {
    /// The approval was used by the vend it was asked for.
    case used
    /// Nobody verified within the timeout, or an approval was not used within it.
    case timedOut = "timed-out"
    /// The customer pressed coin return, or chose another restricted selection.
    case cancelled
    /// vendd restarted: the customer may have gone, so no approval survives a restart.
    case restarted
    /// A reload changed the slot's restriction or removed the verifier.
    case reloaded
    /// The verifier read the customer's ID: younger than the age.
    case tooYoung = "too-young"
    /// The verifier could read no age (no ID shown, the customer gave up at the reader).
    case noAge = "no-age"
    /// The verifier reset or went away while it checked: it will not answer.
    case verifierLost = "verifier-lost"
}

/// Why a verifier that answers (a card reader) said no.
public enum AgeRefusal: String, Hashable, Sendable, Codable {
    case tooYoung = "too-young"
    case noAge = "no-age"
    case verifierLost = "verifier-lost"

    var end: AgeCheckEnd {
        switch self {
        case .tooYoung: .tooYoung
        case .noAge: .noAge
        case .verifierLost: .verifierLost
        }
    }
}
