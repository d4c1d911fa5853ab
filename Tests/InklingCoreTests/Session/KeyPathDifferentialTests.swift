import InklingTestSupport
import Testing

@testable import InklingCore

/// The key path's shortcuts (issue 18) give exactly what the straightforward computation gives:
/// the document cache updated from what a moving window lost is the cache rebuilt from scratch,
/// and a session whose predictor keeps its document gives the same effects as one whose
/// predictor forgets it before every prediction.
@Suite("Key path: the optimised path equals the straightforward one")
struct KeyPathDifferentialTests {
    /// Prose with what word splitting and sentence starts care about: sentence ends, a number,
    /// names, capitals mid-sentence, straight and typographic apostrophes, hyphens, `I'm`.
    static let prose = """
        I met Zorblax at the station. Then zorblax met the cat, and ZORBLAX met me! We don't \
        know why the well-known café closed at 12 o'clock; it hasn\u{2019}t opened since 2019. \
        Anyway, I'm sure the White House said so? Yes. The United States and the United \
        Kingdom sent 3 people - a well-meaning crew - to the New York office. It's the \
        end of the week and I'd like to thank you for the help you gave me last week: the \
        meeting went well, and everyone agreed that the new plan is better than the old one.
        """

    static func assertSame(_ incremental: DocumentCache, _ rebuilt: DocumentCache, _ note: String) {
        #expect(incremental.words == rebuilt.words, "words \(note)")
        #expect(incremental.totalWords == rebuilt.totalWords, "total \(note)")
        #expect(incremental.lastWords == rebuilt.lastWords, "last words \(note)")
        #expect(incremental.lastKeys == rebuilt.lastKeys, "last keys \(note)")
        #expect(incremental.documentKeys == rebuilt.documentKeys, "document keys \(note)")
        #expect(incremental.lastWordFollowers == rebuilt.lastWordFollowers, "followers \(note)")
        #expect(
            incremental.lastWordIsName == rebuilt.lastWordIsName, "capital \(note)")
        #expect(incremental.lastWordsInCapitals == rebuilt.lastWordsInCapitals, "capitals \(note)")
    }

    /// What the predictor does at every letter: the last `window` scalars of the text before
    /// the cursor, less the word being typed. A small window cuts through every kind of word.
    @Test(arguments: [40, 97, 250])
    func aMovingWindowUpdatesTheDocumentAsARebuildWould(window: Int) {
        let pack = FixturePacks.english
        let scalars = Array(Self.prose.unicodeScalars)
        var cache = DocumentCache()
        for length in 0...scalars.count {
            let before = String(String.UnicodeScalarView(scalars[max(0, length - window)..<length]))
            let (context, _) = WordText.splitPartialWord(before)
            cache.update(context: context, pack: pack)
            var rebuilt = DocumentCache()
            rebuilt.update(context: context, pack: pack)
            Self.assertSame(cache, rebuilt, "at \(length) with a window of \(window)")
        }
    }

    /// Contexts that lose their first scalars one to several at a time, down to nothing.
    @Test func losingTheFirstScalarsAnyNumberAtATime() {
        let pack = FixturePacks.english
        let scalars = Array(Self.prose.unicodeScalars)
        for step in [1, 2, 3, 7, 120] {  // 120: more words than the update takes at once (a rebuild)
            var cache = DocumentCache()
            var start = 0
            while start <= scalars.count {
                let context = String(String.UnicodeScalarView(scalars[start...]))
                cache.update(context: Substring(context), pack: pack)
                var rebuilt = DocumentCache()
                rebuilt.update(context: Substring(context), pack: pack)
                Self.assertSame(cache, rebuilt, "from \(start) by \(step)")
                start += step
            }
        }
    }

    /// A session typing a text longer than the predictor's window (so that the window moves at
    /// every letter) shows the same tables and effects as one whose predictor re-reads the whole
    /// document before every prediction.
    @Test func aSessionShowsTheSameTablesAsOneThatRereadsTheDocument() {
        let settings = SessionSettings()
        let optimised = InputSession(predictor: Predictor(pack: RealPack.pack), settings: settings)
        let straightforward = InputSession(predictor: Predictor(pack: RealPack.pack), settings: settings)
        let opening = String(repeating: Self.prose + " ", count: 2)
        for session in [optimised, straightforward] {
            session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
            _ = session.focusIn()
            let count = opening.unicodeScalars.count
            _ = session.setSurroundingText(text: opening, cursor: count, anchor: count)
        }
        let typed = "We walked along the river to the old bridge, and Zorblax said it's the best view in town. "
        for scalar in typed.unicodeScalars {
            let event: KeyEvent = scalar == " " ? .key(Keysym.space) : .typing(scalar)
            let first = optimised.processKey(event)
            let second = straightforward.processKey(event)
            #expect(first.effects == second.effects)
            #expect(first.needsSuggestions == second.needsSuggestions)
            guard first.needsSuggestions else { continue }
            straightforward.predictor.reset()
            let shown = optimised.refreshSuggestions()
            #expect(shown == straightforward.refreshSuggestions(), "after \(Character(scalar))")
            #expect(optimised.currentCandidates == straightforward.currentCandidates)
        }
        #expect(optimised.knownContext.unicodeScalars.count > 1000, "the window moved")
    }
}
