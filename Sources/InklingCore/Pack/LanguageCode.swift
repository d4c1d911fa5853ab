/// The one check for a language code, used wherever a code becomes part of a file name or a
/// setting: every `inkling` command, the manifest reader and the engine's pack loader.
///
/// A code is BCP-47-like: a primary tag of 2–3 lowercase ASCII letters, then any number of
/// subtags of 1–8 ASCII letters or digits, each after `-` or `_` (`en`, `de`, `pt-BR`, `pt_BR`,
/// `sr-Latn`, `gsw`). Nothing else is accepted — no `/`, no `.`, no spaces, no non-ASCII — so a
/// code can never name a path outside the packs folder (`../../victim`) or a hidden file.
public enum LanguageCode {
    /// Longer codes are refused (BCP 47 tags seen in practice are far shorter).
    public static let maximumLength = 35

    /// Whether `code` is an acceptable language code.
    public static func isValid(_ code: String) -> Bool {
        let bytes = Array(code.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        let subtags = bytes.split(omittingEmptySubsequences: false) {
            $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
        }
        guard let primary = subtags.first, (2...3).contains(primary.count), primary.allSatisfy(isLowercaseLetter) else {
            return false
        }
        return subtags.dropFirst().allSatisfy { subtag in
            (1...8).contains(subtag.count)
                && subtag.allSatisfy { isLowercaseLetter($0) || isUppercaseLetter($0) || isDigit($0) }
        }
    }

    /// One sentence saying why `code` is refused, or nil when it is acceptable.
    public static func problem(_ code: String) -> String? {
        guard !isValid(code) else { return nil }
        return "'\(printable(code))' is not a language code (like en, de or pt-BR)"
    }

    /// The code with anything unprintable escaped, for messages (a code may come from anywhere).
    public static func printable(_ code: String) -> String {
        var out = ""
        for scalar in code.unicodeScalars.prefix(64) {
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return code.unicodeScalars.count > 64 ? out + "…" : out
    }

    private static func isLowercaseLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }
    private static func isUppercaseLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
