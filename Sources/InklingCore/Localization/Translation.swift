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

    /// The lookup of a message with a plural (`ngettext`): singular, plural, count → text.
    public typealias PluralLookup = @Sendable (String, String, Int) -> String

    /// The installed lookups. A struct, not a tuple: with Swift 6.3, taking a closure out of a
    /// `Mutex` whose value is a closure or a tuple of closures leaks about 96 bytes per call
    /// (a reabstraction box), and every focus-in translates the menu (issue 18: 2 kB per input
    /// context). Named fields of a struct are read without that box.
    private struct Lookups: Sendable {
        var singular: Lookup
        var plural: PluralLookup
    }

    private static let lookups = Mutex(
        Lookups(singular: { $0 }, plural: { one, many, count in count == 1 ? one : many }))

    /// Makes every later `tr` and `trn` call look its msgid up (the glue passes gettext and ngettext).
    public static func install(_ lookup: @escaping Lookup, plural: @escaping PluralLookup) {
        lookups.withLock { $0 = Lookups(singular: lookup, plural: plural) }
    }

    /// Shows the English msgids again (for tests).
    public static func reset() {
        install({ $0 }, plural: { one, many, count in count == 1 ? one : many })
    }

    /// The singular or plural msgid for `count` in the user's language, placeholders replaced
    /// (`{count}` is usually one of them).
    public static func translate(
        _ singular: String, _ plural: String, count: Int, _ values: KeyValuePairs<String, String> = [:]
    ) -> String {
        let find = lookups.withLock { $0.plural }
        return fill(find(singular, plural, count), values)
    }

    /// The msgid in the user's language, placeholders `{name}` replaced by their values.
    public static func translate(_ msgid: String, _ values: KeyValuePairs<String, String> = [:]) -> String {
        let find = lookups.withLock { $0.singular }
        return fill(find(msgid), values)
    }

    /// `text` with each `{name}` replaced by its value; unknown names are left as they are.
    static func fill(_ text: String, _ values: KeyValuePairs<String, String>) -> String {
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

/// A user-visible sentence that depends on a number (`1 word`, `5 words`), in the user's language.
public func trn(_ singular: String, _ plural: String, count: Int, _ values: KeyValuePairs<String, String> = [:])
    -> String
{
    Translation.translate(singular, plural, count: count, values)
}
