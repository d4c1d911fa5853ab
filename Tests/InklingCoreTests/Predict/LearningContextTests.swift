import Testing

@testable import InklingCore

/// `Predictor.learningContext` reads the words before a learned word from the end; it must
/// give what reading all of them from the start gives (the reading it replaced).
@Suite("Learning context")
struct LearningContextTests {
    /// The reading from the start: every chunk and word of the context's last line, the list
    /// cleared at each break, its last two words.
    static func readFromStart(_ context: Substring) -> [String] {
        var recent: [String] = []
        let lastLine = context.unicodeScalars.lastIndex(where: WordText.isLineBreak).map {
            context[context.unicodeScalars.index(after: $0)...]
        }
        for chunk in (lastLine ?? context).split(whereSeparator: { $0.isWhitespace }) {
            if !LearningPolicy.mayLearnChunk(chunk) {
                recent.removeAll()
                continue
            }
            var previousEnd = chunk.startIndex
            for candidate in WordText.words(in: chunk) {
                let gap = chunk[previousEnd..<candidate.startIndex]
                if gap.contains(where: { $0 == "." || $0 == "!" || $0 == "?" }) { recent.removeAll() }
                if LearningPolicy.mayRecord(String(candidate)) {
                    recent.append(String(candidate))
                } else {
                    recent.removeAll()
                }
                previousEnd = candidate.endIndex
            }
            if chunk[previousEnd...].contains(where: { $0 == "." || $0 == "!" || $0 == "?" }) { recent.removeAll() }
        }
        return Array(recent.suffix(2))
    }

    static let contexts: [String] = [
        "", "the ", "of the ", "I went to the ", "Hello. ", "Hello. I ", "It is. Then we ", "wait... what ",
        "mail me at someone@example.com and ", "see https://example.com/page then ", "a 42 b ", "the 42 ",
        "x1y2z3A4B5C6D7 is ", "rock 'n' roll ", "don't stop ", "well-known fact ", "end.Start ", "(quoted) ",
        "\"Hi,\" she said ", "one two three four ", "one. two three ", "one two. three ", "v2 of it ",
        "www.example.com is the ", "  spaced   out  ", "!? ", "café au ", "why? because ", "a-b-c d ",
        "Hello,\n\n", "one\ntwo ", "one two\r\n", "Dear Sam,\n\nthanks for ", "list:\n- milk\n- eggs ",
        "a\u{2028}b ", "end \n ",
    ]

    @Test("reading from the end gives the last words after the last break, as reading from the start")
    func sameAsFromStart() {
        var texts = Self.contexts
        // Every pair and triple of the samples: breaks before, inside and after the last words.
        for a in Self.contexts { for b in Self.contexts.prefix(12) { texts.append(a + b) } }
        for a in Self.contexts.prefix(10) {
            for b in Self.contexts.prefix(10) {
                for c in Self.contexts.prefix(10) {
                    texts.append(a + b + c)
                }
            }
        }
        for text in texts {
            let (context, _) = WordText.splitPartialWord(text)
            #expect(Predictor.learningContext(context) == Self.readFromStart(context), "\(text.debugDescription)")
        }
    }

    @Test("the words before a learned word become its context")
    func examples() {
        #expect(Predictor.learningContext("I went to the ") == ["to", "the"])
        #expect(Predictor.learningContext("Hello. I ") == ["I"])
        #expect(Predictor.learningContext("mail someone@example.com ") == [])
        #expect(Predictor.learningContext("the 42 ") == [])
    }

    @Test("a line break ends the context: a greeting line is not the context of the next line's word")
    func lineBreakEndsTheContext() {
        #expect(Predictor.learningContext("Hello,\n\n") == [])
        #expect(Predictor.learningContext("Dear Sam,\r\n") == [])
        #expect(Predictor.learningContext("Hi all,\nthanks for ") == ["thanks", "for"])
        #expect(Predictor.learningContext("one two\nthree ") == ["three"])
        #expect(Predictor.learningContext("one two \u{2029} ") == [])
    }
}
