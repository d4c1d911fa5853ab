import InklingCore
import Testing

@Suite("Cloud check: sentences, flags and answers")
struct CloudCheckTests {
    @Test func theSentenceBeforeTheCursorStartsAfterTheLastSentenceEnd() throws {
        let (text, start) = try #require(CloudCheck.sentence(endingAt: "It rained. I saw teh cat.  "))
        #expect(text == "I saw teh cat.")
        #expect(start == 11)
        #expect(CloudCheck.sentence(endingAt: "  ") == nil)
        #expect(CloudCheck.sentence(endingAt: "123 456") == nil, "no letters")
        #expect(try #require(CloudCheck.sentence(endingAt: "one\ntwo three")).text == "two three")
    }

    @Test func sentenceEnds() {
        #expect(CloudCheck.endsSentence("Done. "))
        #expect(CloudCheck.endsSentence("Really?"))
        #expect(!CloudCheck.endsSentence("and so"))
        #expect(!CloudCheck.endsSentence(""))
        #expect(!CloudCheck.endsSentence("and so "))
        #expect(CloudCheck.endsSentence("I saw teh cat\n"), "Return ends the line's sentence")
        #expect(CloudCheck.endsSentence("Hello,\r\n  "))
    }

    @Test func flagsAreSentRelativeToTheirSentence() {
        var corrections = CorrectionTracker()
        let before = "Hi. I saw teh cat "
        corrections.add(
            TypoFlag(word: "teh", replacements: ["the"], explanation: "", margin: 1), before: "Hi. I saw ",
            tail: " cat ")
        let flags = CloudCheck.flags(corrections.flags, before: before, sentenceStart: 4, length: 13)
        #expect(flags == [CloudFlag(start: 6, end: 9, word: "teh", replacements: ["the"])])
        #expect(CloudCheck.flags(corrections.flags, before: before, sentenceStart: 12, length: 5).isEmpty)
    }

    @Test func answersAreMergedOntoTheFlags() {
        var corrections = CorrectionTracker()
        let before = "I saw teh cat adn "
        corrections.add(
            TypoFlag(word: "teh", replacements: ["the"], explanation: "", margin: 1), before: "I saw ",
            tail: " cat adn ")
        var reply = CloudReply(v: CloudProtocol.version, type: "result", id: 1)
        reply.verdicts = [CloudVerdict(start: 6, end: 9, verdict: "agree", explanation: "a typo")]
        reply.fixes = [CloudFix(start: 14, end: 17, original: "adn", replacement: "and", explanation: nil)]
        CloudCheck.merge(reply, sentenceStart: 0, before: before, into: &corrections)
        #expect(corrections.flags.count == 2)
        #expect(corrections.flags.first { $0.flag.word == "teh" }?.flag.explanation == "a typo")
        #expect(corrections.flags.first { $0.flag.word == "adn" }?.origin == .cloud)
        reply.verdicts = [CloudVerdict(start: 6, end: 9, verdict: "disagree", explanation: nil)]
        reply.fixes = nil
        CloudCheck.merge(reply, sentenceStart: 0, before: before, into: &corrections)
        #expect(corrections.flags.map(\.flag.word) == ["adn"])
    }

    @Test func cancellationsAreQueuedOnce() {
        var check = CloudCheck()
        check.cancel()
        #expect(check.takePendingMessages().isEmpty, "nothing was in flight")
    }
}
