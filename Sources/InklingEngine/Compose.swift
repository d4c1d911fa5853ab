import CXkbCommon
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The user's Compose table (libxkbcommon): the locale's file, or `~/.XCompose` / `$XCOMPOSEFILE`
/// when present, compiled once per process and shared by every engine object.
@MainActor
enum XkbComposeTable {
    /// Nil when no table could be loaded (then dead keys reach the application as before).
    static let shared: OpaquePointer? = load()

    private static func load() -> OpaquePointer? {
        guard let context = xkb_context_new(XKB_CONTEXT_NO_DEFAULT_INCLUDES) else { return nil }
        defer { xkb_context_unref(context) }
        var environment: [String: String] = [:]
        for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        for locale in ComposeLocale.candidates(environment: environment) {
            if let table = xkb_compose_table_new_from_locale(context, locale, XKB_COMPOSE_COMPILE_NO_FLAGS) {
                return table
            }
        }
        log("no Compose table for the locale: dead keys and Compose reach the application")
        return nil
    }
}

/// One engine object's Compose state over the shared table; translates libxkbcommon's statuses.
final class XkbComposer: KeysymComposer {
    private let state: OpaquePointer

    /// A composer over the shared table; nil when there is none.
    @MainActor
    static func make() -> XkbComposer? {
        guard let table = XkbComposeTable.shared,
            let state = xkb_compose_state_new(table, XKB_COMPOSE_STATE_NO_FLAGS)
        else { return nil }
        return XkbComposer(state: state)
    }

    private init(state: OpaquePointer) { self.state = state }

    deinit { xkb_compose_state_unref(state) }

    func feed(_ keysym: UInt32) -> ComposeStep {
        xkb_compose_state_feed(state, keysym)
        switch xkb_compose_state_get_status(state) {
        case XKB_COMPOSE_COMPOSING: return .composing
        case XKB_COMPOSE_CANCELLED: return .cancelled
        case XKB_COMPOSE_COMPOSED:
            if let text = composedText(), !text.isEmpty { return .composed(text) }
            return .cancelled  // A sequence without a character (a keysym result that types nothing).
        default: return .none
        }
    }

    func reset() { xkb_compose_state_reset(state) }

    /// The result string, else the character of the result keysym.
    private func composedText() -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = Int(xkb_compose_state_get_utf8(state, &buffer, buffer.count))
        if length >= buffer.count {
            buffer = [CChar](repeating: 0, count: length + 1)
            _ = xkb_compose_state_get_utf8(state, &buffer, buffer.count)
        }
        if length > 0 { return Self.string(buffer) }
        let keysym = xkb_compose_state_get_one_sym(state)
        guard keysym != 0 else { return nil }
        var symbol = [CChar](repeating: 0, count: 8)
        guard xkb_keysym_to_utf8(keysym, &symbol, symbol.count) > 0 else { return nil }
        return Self.string(symbol)
    }

    /// The UTF-8 text before the terminating NUL; nil when it is not valid UTF-8.
    private static func string(_ buffer: [CChar]) -> String? {
        String(validating: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
