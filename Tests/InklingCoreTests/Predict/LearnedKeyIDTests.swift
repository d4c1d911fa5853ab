import InklingTestSupport
import Testing

@testable import InklingCore

/// The predictor remembers the pack id of each learned key; a key is found by its bytes, as
/// the pack finds it, so canonically equivalent keys that differ in bytes keep their own ids.
@Suite("Learned keys' pack ids")
struct LearnedKeyIDTests {
    @Test func rememberedIDsAreThePacks() {
        let pack = FixturePacks.english
        let predictor = Predictor(pack: pack)
        let keys = ["café", "cafe\u{301}", "the", "zorblax", "café", "cafe\u{301}", "the", "zorblax", ""]
        #expect(pack.id(ofKey: "café") != nil)
        #expect(pack.id(ofKey: "cafe\u{301}") == nil)
        for key in keys {
            #expect(predictor.packID(ofLearnedKey: key) == pack.id(ofKey: key), "\(key.debugDescription)")
        }
        // The other order: the decomposed key first.
        let other = Predictor(pack: pack)
        for key in keys.reversed() {
            #expect(other.packID(ofLearnedKey: key) == pack.id(ofKey: key), "\(key.debugDescription)")
        }
    }
}
