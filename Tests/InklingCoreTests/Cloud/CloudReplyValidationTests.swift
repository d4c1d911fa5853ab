import Testing

@testable import InklingCore

/// Cloud fixes are typed into the user's text and explanations shown in the panel: neither may
/// carry control, invisible or bidi characters (before: only `\n` was refused).
@Suite struct CloudReplyValidationTests {
    private let request = CloudCheckRequest(
        id: 1, sentence: "I saw teh cat adn alot more.", language: "en",
        flags: [CloudFlag(start: 6, end: 9, word: "teh", replacements: ["the"])])

    private func fixes(_ replacement: String, original: String = "adn", start: Int = 14, explanation: String? = nil)
        -> [CloudFix]
    {
        let reply = CloudReply(
            type: "result", id: 1,
            fixes: [
                CloudFix(
                    start: start, end: start + original.unicodeScalars.count, original: original,
                    replacement: replacement, explanation: explanation)
            ])
        return reply.validated(against: request).fixes ?? []
    }

    @Test(arguments: [
        ("C0 control CR", "an\rd"), ("ESC sequence", "\u{1B}[2Jand"), ("tab", "a\tnd"), ("newline", "an\nd"),
        ("C1 control", "and\u{85}"),
        ("DEL", "and\u{7F}"),
    ])
    func controlCharactersAreRefused(_ name: String, _ replacement: String) {
        #expect(fixes(replacement).isEmpty, "\(name)")
    }

    @Test(arguments: [
        "\u{202E}dna", "a\u{202A}nd", "an\u{202C}d", "\u{200E}and", "and\u{200F}", "a\u{061C}nd", "\u{2066}and\u{2069}",
        "\u{2067}and", "\u{2068}and",
    ])
    func bidiControlsAreRefused(_ replacement: String) {
        #expect(fixes(replacement).isEmpty, "\(replacement.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test(arguments: [
        "an\u{200B}d", "a\u{AD}nd", "and\u{2060}", "\u{FEFF}and", "and\u{E0041}", "an\u{E000}d", "and\u{2028}",
        "and\u{2029}", "a\u{2003}nd",
    ])
    func invisibleAndSeparatorCharactersAreRefused(_ replacement: String) {
        #expect(fixes(replacement).isEmpty, "\(replacement.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func joinersAreAllowedOnlyInsideWords() {
        // Persian "می‌خواهم" needs ZWNJ between letters; Devanagari "क्‍ष" uses ZWJ after a virama (a mark).
        #expect(CloudText.isSafeReplacement("می\u{200C}خواهم", for: "میخواهم"))
        #expect(CloudText.isSafeReplacement("क्\u{200D}ष", for: "क्ष"))
        #expect(!CloudText.isSafeReplacement("\u{200D}and", for: "adn"))
        #expect(!CloudText.isSafeReplacement("and\u{200C}", for: "adn"))
        #expect(!CloudText.isSafeReplacement("a\u{200D}\u{200D}nd", for: "adn"))
        #expect(!CloudText.isSafeReplacement("a \u{200C}nd", for: "adn"))
    }

    @Test func aFixMayAddAtMostTwoWords() {
        #expect(fixes("a lot", original: "alot", start: 18).count == 1)
        #expect(fixes("and then", original: "adn").count == 1)
        #expect(fixes("and so it", original: "adn").count == 1)
        #expect(fixes("and you must visit evil.example now", original: "adn").isEmpty)
        #expect(fixes(" and", original: "adn").isEmpty)
        #expect(fixes("and ", original: "adn").isEmpty)
    }

    @Test func realWordsStillPass() {
        #expect(fixes("and").count == 1)
        #expect(CloudText.isSafeReplacement("café", for: "cafe"))
        #expect(CloudText.isSafeReplacement("Straße", for: "Strasse"))
        #expect(CloudText.isSafeReplacement("l'été", for: "lete"))
        #expect(CloudText.isSafeReplacement("merci\u{202F}!", for: "merci!"))
        #expect(CloudText.isSafeReplacement("e\u{301}te\u{301}", for: "ete"))  // combining accents
    }

    @Test func explanationsAreFlattenedOrDropped() {
        #expect(fixes("and", explanation: "swapped\nletters\r\n").first?.explanation == "swapped letters")
        #expect(fixes("and", explanation: "a\u{2028}b").first?.explanation == "a b")
        #expect(fixes("and", explanation: "evil \u{1B}]0;title\u{7}").first?.explanation == nil)
        #expect(fixes("and", explanation: "looks \u{202E}desrever").first?.explanation == nil)
        #expect(fixes("and", explanation: "zero\u{200B}width").first?.explanation == nil)
        #expect(
            fixes("and", explanation: String(repeating: "word ", count: 100)).first?.explanation?.unicodeScalars.count
                ?? 0 <= 200)
        // The fix itself survives a bad explanation.
        #expect(fixes("and", explanation: "\u{1B}").count == 1)
        let verdict = CloudReply(
            type: "result", id: 1,
            verdicts: [CloudVerdict(start: 6, end: 9, verdict: "agree", explanation: "ok\u{202E}")])
        #expect(verdict.validated(against: request).verdicts?.first?.explanation == nil)
    }
}
