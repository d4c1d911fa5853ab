import FoundationEssentials
import Testing

@testable import InklingCore

/// The one language-code check shared by the CLI, the manifest reader and the engine.
@Suite("LanguageCode")
struct LanguageCodeTests {
    @Test(arguments: ["en", "de", "fr", "gsw", "pt-BR", "pt_BR", "sr-Latn", "zh-Hant-TW", "en-US-x-a", "de-1996"])
    func acceptsLanguageCodes(_ code: String) {
        #expect(LanguageCode.isValid(code))
        #expect(LanguageCode.problem(code) == nil)
    }

    @Test(arguments: [
        "", "e", "engl", "EN", "En", "../../../../../victim", "../de", "de/../en", "/etc/passwd", "de.inkpack", ".de",
        "de.",
        "..", ".", "de-", "-de", "de--DE", "de-toolongsubtag", "de\u{0}", "de\n", "de ", " de", "dé", "de\\x", "de%2f",
        "d e", "de-DE/x", "ab-" + String(repeating: "a1-", count: 12) + "a",
    ])
    func refusesAnythingElse(_ code: String) {
        #expect(!LanguageCode.isValid(code))
        #expect(LanguageCode.problem(code)?.contains("is not a language code") == true)
    }

    @Test func refusesOverlongCodes() {
        let code = "en" + String(repeating: "-abcdefgh", count: 4)  // 38 characters, each subtag valid
        #expect(code.count > LanguageCode.maximumLength)
        #expect(!LanguageCode.isValid(code))
    }

    @Test func messagesEscapeControlCharacters() {
        let message = LanguageCode.problem("x\u{1b}[2J\n")!
        #expect(!message.unicodeScalars.contains { $0.value < 0x20 })
        #expect(message.contains("\\u{1b}"))
    }

    @Test func theManifestReaderUsesTheSameCheck() throws {
        func manifest(language: String) -> Data {
            let entry = """
                {"language": "\(language)", "displayName": "X", "version": "1", "minEngineVersion": "0.1.0",
                 "file": "x.inkpack", "size": 10, "sha256": "\(String(repeating: "a", count: 64))", "url": "x.inkpack"}
                """
            return Data("{\"formatVersion\": 1, \"packs\": [\(entry)]}".utf8)
        }
        #expect(try PackManifest.parse(manifest(language: "pt-BR")).packs.first?.language == "pt-BR")
        for bad in ["../victim", "de.x", "de/en", "..", "x"] {
            #expect(throws: PackManifest.Problem.invalidEntry(bad)) { try PackManifest.parse(manifest(language: bad)) }
        }
    }
}
