import Foundation
import JWTKit

/// The sync server's bearer tokens: JWTs signed with HMAC-SHA-256 under the server's key, naming the user
/// (whose zone they open) and when they expire.
public struct SyncTokens: Sendable {
    /// Why a key or token cannot be used.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The key file cannot be read, or does not hold one line of base64 of at least 32 bytes.
        case unusableKeyFile(path: String, reason: String)
        /// A key shorter than 32 bytes.
        case keyTooShort(bytes: Int)
        /// A user name that is empty or longer than 256 characters.
        case invalidUser(String)

        /// One line naming the culprit.
        public var description: String {
            switch self {
            case .unusableKeyFile(let path, let reason): "key file \(path): \(reason)"
            case .keyTooShort(let bytes): "a signing key has at least 32 bytes; this one has \(bytes)"
            case .invalidUser(let user): "“\(user.prefix(40))” is not a user name (1 to 256 characters)"
            }
        }
    }

    /// What a token says.
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) throws {
            try exp.verifyNotExpired()
        }
    }

    private let keys: JWTKeyCollection

    /// Tokens signed and checked with `key`.
    ///
    /// - Throws: ``Failure/keyTooShort(bytes:)`` for a key under 32 bytes.
    public init(key: Data) async throws {
        guard key.count >= 32 else { throw Failure.keyTooShort(bytes: key.count) }
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
    }

    /// A new random key, as the one line of base64 a key file holds (`ocd sync key`).
    public static func newKeyLine() -> String {
        Data((0..<32).map { _ in UInt8.random(in: .min ... .max) }).base64EncodedString()
    }

    /// The key in the file at `path`: one line of base64 (surrounding white space ignored) of at least 32 bytes.
    ///
    /// - Throws: ``Failure/unusableKeyFile(path:reason:)`` naming what is wrong.
    public static func readKeyFile(at path: String) throws -> Data {
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw Failure.unusableKeyFile(path: path, reason: "cannot be read")
        }
        guard contents.count < 4096 else { throw Failure.unusableKeyFile(path: path, reason: "is longer than a key line") }
        let text = String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.contains("\n") else { throw Failure.unusableKeyFile(path: path, reason: "holds more than one line") }
        guard let key = Data(base64Encoded: text) else { throw Failure.unusableKeyFile(path: path, reason: "is not base64") }
        guard key.count >= 32 else {
            throw Failure.unusableKeyFile(path: path, reason: "holds \(key.count) bytes; a key has at least 32 (ocd sync key makes one)")
        }
        return key
    }

    /// A token for `user`, valid for `lifetime`.
    ///
    /// - Throws: ``Failure/invalidUser(_:)`` for an empty or overlong user name; `JWTError` when signing fails.
    public func token(for user: String, lifetime: Duration) async throws -> String {
        guard !user.isEmpty, user.count <= 256 else { throw Failure.invalidUser(user) }
        let seconds = Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18
        return try await keys.sign(Claims(sub: SubjectClaim(value: user), exp: ExpirationClaim(value: Date().addingTimeInterval(seconds))))
    }

    /// The user a token names, or nil when the token is malformed, forged (another key) or expired.
    func user(of token: String) async -> String? {
        guard let claims = try? await keys.verify(token, as: Claims.self), !claims.sub.value.isEmpty,
              claims.sub.value.count <= 256 else { return nil }
        return claims.sub.value
    }
}
