import CSodium

/// libsodium for the back office: Argon2id password hashes (`crypto_pwhash_str`), random tokens,
/// token digests and comparisons in constant time.
public enum Sodium {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// sodium_init, once per process; safe to call again.
    public static func start() throws(Failure) {
        guard sodium_init() >= 0 else { throw Failure(description: "libsodium could not start (sodium_init failed: no entropy source?)") }
    }

    /// An Argon2id hash in libsodium's string form (`$argon2id$v=19$m=…`), with its salt and
    /// parameters: libsodium's interactive limits (64 MiB, 2 passes).
    public static func hashPassword(_ password: String) throws(Failure) -> String {
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let status = crypto_pwhash_str_alg(
            &output, password, UInt64(password.utf8.count), UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive(),
            crypto_pwhash_alg_argon2id13())
        guard status == 0 else { throw Failure(description: "hashing the password failed (out of memory: Argon2id needs 64 MiB)") }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches `hash` (false for a hash that is not one).
    public static func verifyPassword(_ password: String, hash: String) -> Bool {
        crypto_pwhash_str_verify(hash, password, UInt64(password.utf8.count)) == 0
    }

    /// `count` random bytes from libsodium (the kernel's getrandom), as lowercase hex.
    public static func randomToken(bytes count: Int = 32) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return hex(bytes)
    }

    /// A BLAKE2b digest of a token, as stored: a database leak gives no usable session.
    public static func tokenDigest(_ token: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_generichash_bytes()))
        let input = Array(token.utf8)
        crypto_generichash(&digest, digest.count, input, UInt64(input.count), nil, 0)
        return hex(digest)
    }

    /// Equal texts, compared in time that depends on their length only.
    public static func equal(_ left: String, _ right: String) -> Bool {
        let a = Array(left.utf8)
        let b = Array(right.utf8)
        guard a.count == b.count else { return false }
        return a.isEmpty || sodium_memcmp(a, b, a.count) == 0
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
