import FoundationEssentials
import InklingCore
import Testing

/// Names and versions from a downloaded manifest reach the language menu and the terminal.
@Suite struct PackManifestTextTests {
    private func manifest(displayName: String = "Deutsch", version: String = "1.0") -> Data {
        // JSON-escape everything outside printable ASCII (the test strings are all in the BMP).
        func escaped(_ text: String) -> String {
            text.unicodeScalars.map { scalar -> String in
                if scalar.value >= 0x20, scalar.value < 0x7F, scalar != "\"", scalar != "\\" { return String(scalar) }
                let hex = String(scalar.value, radix: 16)
                return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            }.joined()
        }
        let json = """
            {"formatVersion": 1, "packs": [{"language": "de", "displayName": "\(escaped(displayName))", "version": "\(escaped(version))",
             "minEngineVersion": "0.1.0", "file": "de.inkpack", "size": 10,
             "sha256": "\(String(repeating: "a", count: 64))", "url": "https://example.org/de.inkpack"}]}
            """
        return Data(json.utf8)
    }

    @Test func ordinaryNamesAndVersionsAreAccepted() throws {
        #expect(
            try PackManifest.parse(manifest(displayName: "Deutsch (Schweiz)")).packs.first?.displayName
                == "Deutsch (Schweiz)")
        #expect(try PackManifest.parse(manifest(displayName: "Français")).packs.first?.displayName == "Français")
        #expect(try PackManifest.parse(manifest(displayName: "فارسی")).packs.first?.displayName == "فارسی")
        #expect(try PackManifest.parse(manifest(version: "2.1.0-beta+3")).packs.first?.version == "2.1.0-beta+3")
    }

    @Test(arguments: [
        "\u{1b}[2JDeutsch", "Deutsch\r", "Deu\u{202E}hcst", "Deutsch\u{200B}", "Deutsch\u{2028}x", "",
        String(repeating: "D", count: 65), " Deutsch",
    ])
    func namesWithControlBidiOrInvisibleCharactersAreRefused(name: String) {
        #expect(throws: PackManifest.Problem.invalidEntry("de")) { try PackManifest.parse(manifest(displayName: name)) }
    }

    @Test(arguments: ["1.0\u{1b}[31m", "", "1 0", String(repeating: "1", count: 33)])
    func versionsOtherThanDottedAsciiAreRefused(version: String) {
        #expect(throws: PackManifest.Problem.invalidEntry("de")) { try PackManifest.parse(manifest(version: version)) }
    }
}
