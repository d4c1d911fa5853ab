import CIntl
import Glibc
import InklingCore

/// gettext for the glue: binds the `inkling` text domain (declared by the IBus component and the
/// GSettings schema) and installs it as InklingCore's `Translation` lookup.
public enum Gettext {
    /// The text domain: the name of the `.mo` files under `<localedir>/<lang>/LC_MESSAGES/`.
    public static let domain = "inkling"

    /// Where the `.mo` files are: `$INKLING_LOCALEDIR` when set (tests, uninstalled builds),
    /// else `<prefix>/share/locale` beside the running executable's `<prefix>/bin` or `<prefix>/libexec`.
    public static func localeDirectory() -> String {
        if let value = getenv("INKLING_LOCALEDIR").map({ String(cString: $0) }), value.hasPrefix("/") { return value }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "/usr/share/locale" }
        let exe = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var parts = exe.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, ["bin", "libexec"].contains(parts[parts.count - 2]) else { return "/usr/share/locale" }
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/share/locale"
    }

    /// Sets the locale from the environment (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`), binds
    /// the domain in UTF-8 and makes `tr` in InklingCore translate. Call once, first thing in main.
    public static func start() {
        setlocale(LC_ALL, "")
        // Numbers and dates stay as Swift prints them; only messages follow the user's language.
        setlocale(LC_NUMERIC, "C")
        bindtextdomain(domain, localeDirectory())
        bind_textdomain_codeset(domain, "UTF-8")
        textdomain(domain)
        // gettext returns its own argument when there is no translation: here a temporary C copy
        // of the Swift string that dies with the call, so the result is read inside `withCString`.
        Translation.install(
            { msgid in
                // gettext("") is the catalogue's header, never a message.
                guard !msgid.isEmpty else { return msgid }
                return msgid.withCString { String(cString: dgettext(domain, $0)) }
            },
            plural: { singular, plural, count in
                singular.withCString { one in
                    plural.withCString { many in String(cString: dngettext(domain, one, many, UInt(max(0, count)))) }
                }
            })
    }
}
