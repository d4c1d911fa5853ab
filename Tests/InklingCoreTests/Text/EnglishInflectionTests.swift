import InklingCore
import Testing

@Suite("English inflection rules")
struct InflectionTests {
    private static let stems: Set<String> = [
        "run", "stop", "hire", "wide", "box", "sell", "agree", "and", "snide", "tax", "stoop", "see",
    ]

    @Test(arguments: [
        "running", "stopped", "hired", "wider", "boxes", "sells", "agreed", "snidely", "seeing", "agreeing", "taxes",
    ])
    func realInflections(word: String) {
        #expect(EnglishInflection.isInflection(word, of: { Self.stems.contains($0) }))
    }

    @Test(arguments: ["wideer", "sellss", "andd", "taxxes", "stoopped", "agreeed", "boxs", "hireing"])
    func typosThatLookLikeInflections(word: String) {
        #expect(!EnglishInflection.isInflection(word, of: { Self.stems.contains($0) }))
    }
}
