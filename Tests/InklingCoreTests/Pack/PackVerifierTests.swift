import FoundationEssentials
import InklingCore
import InklingTestSupport
import Testing

/// A stand-in digest: the glue computes a real SHA-256; the rule only compares strings.
private func fakeDigest(_ data: Data) -> String? { "digest-\(data.count)-\(data.reduce(0) { ($0 &* 31) &+ Int($1) })" }

private func entry(language: String = "en", size: Int? = nil, sha256: String? = nil) -> PackManifest.Entry {
    let data = Data(FixturePacks.englishBytes)
    return PackManifest.Entry(
        language: language, displayName: "English", version: "1", minEngineVersion: "0.1", file: "en.inkpack",
        size: size ?? data.count, sha256: sha256 ?? fakeDigest(data) ?? "", url: "https://example.invalid/en.inkpack")
}

@Suite("Pack verifier (shared by the CLI and the engine)")
struct PackVerifierTests {
    private let data = Data(FixturePacks.englishBytes)

    @Test func aSoundPackIsOpened() throws {
        let pack = try PackVerifier.verify(data, against: entry(), sha256: fakeDigest).get()
        #expect(pack.language == "en")
    }

    @Test func eachRuleRefusesWithItsReason() {
        func reason(_ result: Result<LanguagePack, PackVerifier.Refusal>) -> String? {
            if case .failure(let refusal) = result { return refusal.reason } else { return nil }
        }
        #expect(
            reason(PackVerifier.verify(data, against: entry(size: data.count + 1), sha256: fakeDigest))
                == "size \(data.count) bytes, expected \(data.count + 1)")
        #expect(
            reason(PackVerifier.verify(data, against: entry(), sha256: { _ in nil })) == "cannot compute its SHA-256")
        #expect(
            reason(PackVerifier.verify(data, against: entry(sha256: "0000"), sha256: fakeDigest)) == "SHA-256 mismatch")
        #expect(
            reason(PackVerifier.verify(data, against: entry(language: "de"), sha256: fakeDigest)) == "it is a 'en' pack"
        )
        var broken = data
        broken[broken.count / 2] ^= 0xFF
        let brokenEntry = entry(sha256: fakeDigest(broken))
        #expect(
            reason(PackVerifier.verify(broken, against: brokenEntry, sha256: fakeDigest)) != nil, "a damaged structure")
    }
}
