import FoundationEssentials
import InklingCore
import Testing

@testable import InklingCloud
@testable import InklingCore

@Suite("ChatCompletion")
struct ChatCompletionTests {
    let request = CloudCheckRequest(
        id: 7, sentence: "I saw teh cat adn dog.", language: "en",
        flags: [CloudFlag(start: 6, end: 9, word: "teh", replacements: ["the"])])

    @Test func wordsCountCodePoints() {
        let words = ChatCompletion.words(in: "Hi 👋🏽 don't re-do café,e\u{301}")
        #expect(words.map(\.text) == ["Hi", "don't", "re-do", "café", "e\u{301}"])
        #expect(words.map(\.start) == [0, 6, 12, 18, 23])
        #expect(words.last?.end == 25)
    }

    @Test func requestBodyHasTheAgreedShape() throws {
        let body = ChatCompletion.requestBody(model: "gpt-x", request: request)
        let object = try JSONDecoder().decode(Body.self, from: Data(body))
        #expect(object.model == "gpt-x")
        #expect(object.temperature == 0)
        #expect(object.responseFormat.type == "json_object")
        #expect(object.messages.map(\.role) == ["system", "user"])
        #expect(object.messages[1].content.contains("\"sentence\":\"I saw teh cat adn dog.\""))
        #expect(object.messages[1].content.contains("\"suggestions\":[\"the\"]"))
    }

    struct Body: Decodable {
        struct Message: Decodable {
            var role: String
            var content: String
        }
        struct Format: Decodable { var type: String }
        var model: String
        var messages: [Message]
        var temperature: Int
        var responseFormat: Format

        enum CodingKeys: String, CodingKey {
            case model, messages, temperature
            case responseFormat = "response_format"
        }
    }

    @Test func readsFencedAndLenientAnswers() {
        let content = """
            Here you go:
            ```json
            {"verdicts":[{"start":"6","end":9.0,"verdict":" Agree ","explanation":"typo\\n"},{"start":"x"}],
             "fixes":[{"start":14,"end":17,"original":"adn","replacement":"and"}]}
            ```
            """
        let (reply, wellFormed) = ChatCompletion.reply(fromContent: content, request: request)
        #expect(wellFormed)
        let validated = reply.validated(against: request)
        #expect(validated.verdicts == [CloudVerdict(start: 6, end: 9, verdict: "agree", explanation: "typo")])
        #expect(validated.fixes == [CloudFix(start: 14, end: 17, original: "adn", replacement: "and")])
    }

    @Test func oneVerdictPerSpan() {
        let content = #"{"verdicts":[{"start":6,"end":9,"verdict":"agree"},{"start":6,"end":9,"verdict":"disagree"}]}"#
        let reply = ChatCompletion.reply(fromContent: content, request: request).reply.validated(against: request)
        #expect(reply.verdicts == [CloudVerdict(start: 6, end: 9, verdict: "agree")])
        #expect(reply.fixes == [])
    }

    @Test func malformedContentIsAnEmptyResult() {
        for content in ["", "no json here", "{\"verdicts\": [", "[1,2]", "{\"verdicts\": 5}"] {
            let (reply, wellFormed) = ChatCompletion.reply(fromContent: content, request: request)
            #expect(!wellFormed)
            #expect(reply.type == "result" && reply.id == 7 && reply.verdicts == [] && reply.fixes == [])
        }
    }

    @Test func relocatesOnlyUnambiguousWholeWords() {
        let scalars = Array("teh cat and teh dog".unicodeScalars)
        #expect(ChatCompletion.relocate(original: "cat", start: 5, end: 8, in: scalars)! == (4, 7))
        #expect(ChatCompletion.relocate(original: "teh", start: 1, end: 4, in: scalars) == nil, "two occurrences")
        #expect(ChatCompletion.relocate(original: "at", start: 0, end: 2, in: scalars) == nil, "inside a word only")
        #expect(ChatCompletion.relocate(original: "cat", start: 4, end: 7, in: scalars) == nil, "already right")
        #expect(ChatCompletion.relocate(original: "cow", start: 4, end: 7, in: scalars) == nil)
    }

    @Test func chatResponseBodies() {
        #expect(
            ChatCompletion.content(fromResponseBody: Array(#"{"choices":[{"message":{"content":"{}"}}]}"#.utf8)) == "{}"
        )
        #expect(
            ChatCompletion.content(fromResponseBody: Array(#"{"choices":[{"message":{"content":null}}]}"#.utf8)) == "")
        #expect(ChatCompletion.content(fromResponseBody: Array(#"{"choices":[]}"#.utf8)) == nil)
        #expect(ChatCompletion.content(fromResponseBody: Array("<html>".utf8)) == nil)
    }

    @Test func cacheKeyDependsOnFlagsAndLanguage() {
        var other = request
        other.id = 8
        #expect(Service.cacheKey(for: request) == Service.cacheKey(for: other))
        other.flags = []
        #expect(Service.cacheKey(for: request) != Service.cacheKey(for: other))
        other = request
        other.language = "de"
        #expect(Service.cacheKey(for: request) != Service.cacheKey(for: other))
    }
}
