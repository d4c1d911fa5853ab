import Synchronization

/// How the user-visible sentences of InklingCore reach the user's language.
///
/// InklingCore has no C imports, so it cannot call gettext itself. Every sentence the core shows
/// (notices, chips' explanations, the menu's title, heartbeat status) is written as
/// `tr("English text with {placeholders}", ["placeholder": value])`: the English text is the
/// gettext msgid, found by `xgettext --keyword=tr` (see `po/`). The glue installs the real lookup
/// (gettext with the `inkling` text domain) once at start-up with `Translation.install`; until
/// then, and in the core's tests, the lookup is the identity and the English text is shown.
///
/// Placeholders are named (`{word}`), not printf-style, so a translation may reorder them and a
/// translation that drops or misspells one is caught by a test over `po/*.po`.
public enum Translation {
    /// The lookup from a msgid to the text in the user's language.
    public typealias Lookup = @Sendable (String) -> String

    private static let lookup = Mutex<Lookup>({ $0 })

    /// Makes every later `tr` call look its msgid up with `lookup` (the glue passes gettext).
    public static func install(_ lookup: @escaping Lookup) {
        self.lookup.withLock { $0 = lookup }
    }

    /// Shows the English msgids again (for tests).
    public static func reset() {
        install { $0 }
    }

    /// The msgid in the user's language, placeholders `{name}` replaced by their values.
    public static func translate(_ msgid: String, _ values: KeyValuePairs<String, String> = [:]) -> String {
        let find = lookup.withLock { $0 }
        let text = find(msgid)
        guard !values.isEmpty else { return text }
        // One pass, so a value that itself contains `{name}` (a typed word) is never expanded.
        var result = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}"),
                let value = values.first(where: { $0.key == after[..<close] })?.value
            else {
                result.append("{")
                rest = after
                continue
            }
            result += value
            rest = after[after.index(after: close)...]
        }
        return result + rest
    }

    /// The names of the `{placeholders}` in a msgid or translation, in order of appearance.
    public static func placeholders(in text: String) -> [String] {
        var names: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}") else { break }
            names.append(String(after[..<close]))
            rest = after[after.index(after: close)...]
        }
        return names
    }
}

/// A user-visible sentence in the user's language; `msgid` is the English text (see `Translation`).
public func tr(_ msgid: String, _ values: KeyValuePairs<String, String> = [:]) -> String {
    Translation.translate(msgid, values)
}
