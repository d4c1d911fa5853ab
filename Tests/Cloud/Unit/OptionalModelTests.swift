import FoundationEssentials
import InklingCommandLine
import InklingCore
import Testing

@testable import InklingCloud

/// The model is optional: an Inkling Server needs none, and an empty `cloud-model` setting means
/// the endpoint's default model (the engine then starts the helper without `--model`).
@Suite struct OptionalModelTests {
    @Test func theHelperStartsWithoutAModel() throws {
        let options = try Options.parse(["--endpoint", "https://inkling.example"])
        #expect(options.model == "")
        #expect(throws: UsageError.self) { try Options.parse(["--endpoint", "https://e", "--model", ""]) }
        #expect(throws: UsageError.self) {
            try Options.parse(["--endpoint", "https://e", "--model", "a\u{7}b"])
        }
    }

    @Test func withoutAModelTheRequestNamesNone() throws {
        let request = CloudCheckRequest(id: 1, sentence: "I saw teh cat.", language: "en", flags: [])
        let without = try JSONDecoder().decode(
            [String: JSONValue].self, from: Data(ChatCompletion.requestBody(model: "", request: request)))
        #expect(without["model"] == nil && without["messages"] != nil)
        let with = try JSONDecoder().decode(
            [String: JSONValue].self, from: Data(ChatCompletion.requestBody(model: "m", request: request)))
        #expect(with["model"] == .string("m"))
    }
}

/// Just enough JSON to look at a body's top-level keys.
private enum JSONValue: Decodable, Equatable {
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self = .string(text)
        } else {
            self = .other
        }
    }
}
