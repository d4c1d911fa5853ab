import InklingServerProtocol

/// Seconds since 1970-01-01 UTC; injected so token lifetimes, grace periods and limit windows
/// are tested without waiting.
public protocol WallClock: Sendable {
    func seconds() -> Int64
}

/// Random bytes from the kernel (`getrandom`) in the server; fixed sequences in tests.
public protocol RandomSource: Sendable {
    func bytes(_ count: Int) -> [UInt8]
}

/// Argon2id in the server (libargon2); a cheap stand-in in tests.
public protocol PasswordHasher: Sendable {
    /// The encoded hash (`$argon2id$v=19$m=…`) of a password, or nil if hashing failed.
    func hash(_ password: [UInt8]) -> String?
    /// Whether `password` matches an encoded hash.
    func verify(_ password: [UInt8], encoded: String) -> Bool
}

/// Device tokens: `ink_` and 256 random bits in unpadded base64url; only their SHA-256 is stored.
public enum DeviceToken {
    /// A fresh token from 32 random bytes.
    public static func make(random: any RandomSource) -> String {
        ServerAPI.tokenPrefix + base64URL(random.bytes(32))
    }

    /// The stored form of a token: its SHA-256 in hex.
    public static func storedHash(_ token: String) -> String {
        SHA256.hex(Array(token.utf8))
    }

    /// Unpadded base64url (RFC 4648 §5).
    public static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { value |= UInt32(byte) << UInt32(16 - 8 * offset) }
            let characters = chunk.count + 1
            for position in 0..<characters { out.append(alphabet[Int((value >> UInt32(18 - 6 * position)) & 0x3F)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
