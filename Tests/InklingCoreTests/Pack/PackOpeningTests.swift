import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// How the engine opens its bundled pack (issue 18): mapped only when no ordinary user can
/// change the file, used before its full check only when a settled record of that very file
/// stands, and the deferred checks then find what the full check at open would have found.
@Suite("PackOpening")
struct PackOpeningTests {
    static let second: Int64 = 1_000_000_000
    static let digest = String(repeating: "ab", count: 32)
    static let identity = PackFileIdentity(
        device: 2049, inode: 131_072, size: 9_737_768, modified: 1_700_000_000 * second, changed: 1_700_000_000 * second
    )
    /// The package's pack: root's, 0644, on a writable file system.
    static let system = PackFileFacts(
        identity: identity, ownerUID: 0, permissions: 0o644, isRegularFile: true, onReadOnlyFileSystem: false)
    static let record = PackVerificationRecord(
        identity: identity, sha256: digest, verifiedAt: identity.changed + 60 * second)

    @Test func aSystemPackWithAMatchingSettledRecordIsUsedAtOnce() {
        #expect(PackOpening.plan(for: Self.system, record: Self.record) == .mapTrustingRecord)
    }

    @Test func noRecordOrADamagedOneMeansVerifyingBeforeUse() {
        #expect(PackOpening.plan(for: Self.system, record: nil) == .mapAndVerify)
        var damaged = Self.record
        damaged.sha256 = "not a digest"
        #expect(PackOpening.plan(for: Self.system, record: damaged) == .mapAndVerify)
    }

    @Test func aRecordOfAnotherFileOrAnEarlierStateMeansVerifyingBeforeUse() {
        let changes: [(String, (inout PackFileIdentity) -> Void)] = [
            ("another inode (a package upgrade renamed a new file over it)", { $0.inode += 1 }),
            ("another device", { $0.device += 1 }),
            ("another size", { $0.size -= 8 }),
            ("written since", { $0.modified += 1 }),
            ("modification time put back after a write", { $0.changed += 1 }),
        ]
        for (what, change) in changes {
            var facts = Self.system
            change(&facts.identity)
            #expect(PackOpening.plan(for: facts, record: Self.record) == .mapAndVerify, Comment(rawValue: what))
        }
    }

    @Test func aStaleRecordTakenTooCloseToTheLastChangeIsNotTrusted() {
        var racy = Self.record
        racy.verifiedAt = Self.identity.changed + PackVerification.racyMargin - 1
        #expect(PackOpening.plan(for: Self.system, record: racy) == .mapAndVerify)
        racy.verifiedAt = Self.identity.changed + PackVerification.racyMargin
        #expect(PackOpening.plan(for: Self.system, record: racy) == .mapTrustingRecord)
    }

    @Test func aFileAnOrdinaryUserCanChangeIsReadPrivatelyWhateverItsRecord() {
        var userOwned = Self.system
        userOwned.ownerUID = 1000
        var groupWritable = Self.system
        groupWritable.permissions = 0o664
        var worldWritable = Self.system
        worldWritable.permissions = 0o646
        for facts in [userOwned, groupWritable, worldWritable] {
            #expect(PackOpening.canChangeUnderMapping(facts))
            #expect(PackOpening.plan(for: facts, record: Self.record) == .readPrivately)
            #expect(PackOpening.plan(for: facts, record: nil) == .readPrivately)
        }
        // On a read-only file system nobody can change it, whoever owns it.
        var readOnly = userOwned
        readOnly.permissions = 0o666
        readOnly.onReadOnlyFileSystem = true
        #expect(!PackOpening.canChangeUnderMapping(readOnly))
        #expect(PackOpening.plan(for: readOnly, record: Self.record) == .mapTrustingRecord)
    }

    @Test func somethingThatIsNotAPackSizedRegularFileIsReadPrivately() {
        var fifo = Self.system
        fifo.isRegularFile = false
        var empty = Self.system
        empty.identity.size = 0
        var huge = Self.system
        huge.identity.size = PackFile.maximumSize + 1
        for facts in [fifo, empty, huge] {
            #expect(PackOpening.plan(for: facts, record: nil) == .readPrivately)
        }
    }

    // MARK: Deferred checks

    @Test func aDeferredPackAnswersAsTheFullyCheckedOneAndPassesItsDeferredChecks() throws {
        let full = try LanguagePack(data: Data(FixturePacks.englishBytes))
        let deferred = try LanguagePack(data: Data(FixturePacks.englishBytes), check: .deferred)
        #expect(deferred.file.check == .deferred)
        try deferred.verifyDeferredChecks()
        for before in ["Th", "the pres", "I don'", "of the "] {
            #expect(
                Predictor(pack: deferred).suggest(before: before, count: 5)
                    == Predictor(pack: full).suggest(before: before, count: 5))
        }
    }

    @Test func corruptionAfterTheRecordIsFoundByTheDeferredChecks() throws {
        // A flipped byte: the checksum catches it (opening deferred does not look).
        var flipped = FixturePacks.englishBytes
        flipped[flipped.count / 2] ^= 0x40
        let opened = try LanguagePack(data: Data(flipped), check: .deferred)
        #expect(throws: PackError.checksumMismatch) { try opened.verifyDeferredChecks() }
        #expect(throws: PackError.checksumMismatch) { try LanguagePack(data: Data(flipped)) }
    }

    /// The fuzzer's mutations (checksum fixed, so that they reach the structural checks): a
    /// pack opened with its checks deferred is refused by `verifyDeferredChecks()` exactly when
    /// the full open refuses it.
    @Test func deferredChecksRefuseWhatTheFullOpenRefuses() throws {
        let sections = try PackSurgery.sections(of: PackFuzzTests.base)
        var disagreements: [String] = []
        var refused = 0
        for round in 0..<1500 {
            var rng = SplitMix64(seed: 0x0DEF_E44E &+ UInt64(round))
            let (name, bytes) = PackFuzzTests.mutate(sections, using: &rng)
            let fullRefusal: PackError?
            do {
                _ = try LanguagePack(data: Data(bytes))
                fullRefusal = nil
            } catch {
                fullRefusal = error
            }
            var deferredRefusal: PackError?
            do {
                let pack = try LanguagePack(data: Data(bytes), check: .deferred)
                try pack.verifyDeferredChecks()
            } catch {
                deferredRefusal = error
            }
            if fullRefusal != nil { refused += 1 }
            if (fullRefusal == nil) != (deferredRefusal == nil) {
                disagreements.append(
                    "round \(round) \(name): full \(String(describing: fullRefusal)), deferred \(String(describing: deferredRefusal))"
                )
            }
        }
        #expect(disagreements.isEmpty, Comment(rawValue: disagreements.prefix(5).joined(separator: "\n")))
        #expect(refused > 300)
    }
}
