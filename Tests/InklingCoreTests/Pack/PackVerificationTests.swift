import Testing

@testable import InklingCore

/// When the engine may skip hashing a pack: only for the very file it hashed, unchanged since,
/// against the manifest's digest, and only if the hash was taken well after the last change.
@Suite("PackVerification")
struct PackVerificationTests {
    static let second: Int64 = 1_000_000_000
    static let digest = String(repeating: "ab", count: 32)
    static let file = PackFileIdentity(
        device: 2049, inode: 131_072, size: 9_737_768, modified: 1_700_000_000 * second, changed: 1_700_000_000 * second
    )
    static let settled = PackVerificationRecord(identity: file, sha256: digest, verifiedAt: file.changed + 60 * second)

    @Test func noRecordMeansHashing() {
        #expect(PackVerification.decide(current: Self.file, record: nil, expectedSHA256: Self.digest) == .verifyFully)
    }

    @Test func aSettledRecordOfTheSameFileIsTrusted() {
        #expect(
            PackVerification.decide(current: Self.file, record: Self.settled, expectedSHA256: Self.digest)
                == .trustRecord)
        // Compared exactly, as the full check compares: a digest in capitals is hashed (and refused).
        #expect(
            PackVerification.decide(current: Self.file, record: Self.settled, expectedSHA256: Self.digest.uppercased())
                == .verifyFully)
    }

    @Test func anyChangeOfIdentityMeansHashing() {
        var changes: [PackFileIdentity] = []
        var file = Self.file
        file.size += 1
        changes.append(file)
        file = Self.file
        file.modified += 1
        changes.append(file)
        file = Self.file
        // Modification time put back after a write: the status-change time still moved.
        file.changed += 1
        changes.append(file)
        file = Self.file
        file.inode += 1  // replaced by rename
        changes.append(file)
        file = Self.file
        file.device += 1
        changes.append(file)
        for changed in changes {
            #expect(
                PackVerification.decide(current: changed, record: Self.settled, expectedSHA256: Self.digest)
                    == .verifyFully)
        }
    }

    @Test func aNewDigestInTheManifestMeansHashing() {
        let other = String(repeating: "cd", count: 32)
        #expect(
            PackVerification.decide(current: Self.file, record: Self.settled, expectedSHA256: other) == .verifyFully)
        #expect(PackVerification.decide(current: Self.file, record: Self.settled, expectedSHA256: "") == .verifyFully)
    }

    @Test func aHashTakenRightAfterAChangeIsNeverTrusted() {
        // A write in the same clock tick as the change before the hash would leave `stat` unchanged.
        var racy = Self.settled
        racy.verifiedAt = Self.file.changed + PackVerification.racyMargin - 1
        #expect(!PackVerification.isSettled(racy))
        #expect(PackVerification.decide(current: Self.file, record: racy, expectedSHA256: Self.digest) == .verifyFully)
        racy.verifiedAt = Self.file.changed + PackVerification.racyMargin
        #expect(PackVerification.decide(current: Self.file, record: racy, expectedSHA256: Self.digest) == .trustRecord)
        // The later of the two times counts.
        var file = Self.file
        file.changed = file.modified + 10 * Self.second
        let record = PackVerificationRecord(
            identity: file, sha256: Self.digest, verifiedAt: file.modified + 5 * Self.second)
        #expect(PackVerification.decide(current: file, record: record, expectedSHA256: Self.digest) == .verifyFully)
    }

    @Test func recordsSurviveTheirTextAndDamagedOnesAreIgnored() {
        let text = Self.settled.encoded()
        #expect(PackVerificationRecord(encoded: text) == Self.settled)
        #expect(PackVerificationRecord(encoded: "") == nil)
        #expect(PackVerificationRecord(encoded: String(text.dropLast(10))) == nil)
        #expect(PackVerificationRecord(encoded: "v2" + text.dropFirst(2)) == nil)
        #expect(PackVerificationRecord(encoded: String(text.dropLast(65)) + Self.digest.uppercased() + "\n") == nil)
        #expect(PackVerificationRecord(encoded: text + " extra") == nil)
    }
}
