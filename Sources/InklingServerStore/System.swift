import CArgon2
import Glibc
import InklingServerCore

/// The real clock: seconds since 1970 UTC.
public struct SystemWallClock: WallClock {
    public init() {}
    public func seconds() -> Int64 { Int64(time(nil)) }
}

/// The kernel's random bytes (`getrandom`). Aborts rather than hand out weak randomness.
public struct KernelRandom: RandomSource {
    public init() {}
    public func bytes(_ count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let code = buffer.withUnsafeMutableBytes { inkling_getrandom($0.baseAddress, $0.count) }
        precondition(code == 0, "getrandom failed")
        return buffer
    }
}

/// Argon2id (libargon2) with the configured cost; verification reads the cost from the hash.
public struct Argon2idHasher: PasswordHasher {
    public var iterations: UInt32
    public var memoryKiB: UInt32
    public var parallelism: UInt32
    let random = KernelRandom()

    public init(iterations: UInt32 = 3, memoryKiB: UInt32 = 65_536, parallelism: UInt32 = 1) {
        self.iterations = max(1, iterations)
        self.memoryKiB = max(8 * max(1, parallelism), memoryKiB)
        self.parallelism = max(1, parallelism)
    }

    public func hash(_ password: [UInt8]) -> String? {
        let salt = random.bytes(16)
        let length = argon2_encodedlen(iterations, memoryKiB, parallelism, UInt32(salt.count), 32, Argon2_id)
        var encoded = [CChar](repeating: 0, count: length + 1)
        let code = password.withUnsafeBytes { passwordBytes in
            salt.withUnsafeBytes { saltBytes in
                argon2id_hash_encoded(
                    iterations, memoryKiB, parallelism, passwordBytes.baseAddress, passwordBytes.count,
                    saltBytes.baseAddress, saltBytes.count, 32, &encoded, encoded.count)
            }
        }
        guard code == ARGON2_OK.rawValue else { return nil }
        return String(cString: encoded)
    }

    public func verify(_ password: [UInt8], encoded: String) -> Bool {
        password.withUnsafeBytes { bytes in
            argon2id_verify(encoded, bytes.baseAddress, bytes.count) == ARGON2_OK.rawValue
        }
    }
}
