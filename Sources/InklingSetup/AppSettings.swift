import CGtk
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's GSettings as the app sees them: read, written, and followed live (a change made
/// with `inkling config` or `gsettings` reaches the open window through the `changed` signal).
final class AppSettings {
    let settings: UnsafeMutablePointer<GSettings>?
    private let schema: OpaquePointer?
    private var watchers: [String: [() -> Void]] = [:]
    /// True while widgets are being set from the settings: their own signals must not write back.
    private(set) var refreshing = false

    init() {
        // g_settings_new aborts on a schema that is not installed: look it up first.
        if let source = g_settings_schema_source_get_default(),
            let found = g_settings_schema_source_lookup(source, EngineSettingsSchema.id, 1)
        {
            schema = found
            settings = g_settings_new_full(found, nil, nil)
        } else {
            schema = nil
            settings = nil
        }
        if let settings {
            onText(raw(settings), "changed") { [weak self] key in self?.changed(key) }
        }
    }

    var available: Bool { settings != nil }

    func has(_ key: String) -> Bool { schema.map { g_settings_schema_has_key($0, key) != 0 } ?? false }

    /// Runs `refresh` now and whenever `key` changes.
    func watch(_ key: String, _ refresh: @escaping () -> Void) {
        watchers[key, default: []].append(refresh)
        withRefreshing(refresh)
    }

    private func changed(_ key: String) {
        for refresh in watchers[key] ?? [] { withRefreshing(refresh) }
    }

    private func withRefreshing(_ body: () -> Void) {
        let before = refreshing
        refreshing = true
        body()
        refreshing = before
    }

    func int(_ key: String) -> Int { settings.flatMap { has(key) ? Int(g_settings_get_int($0, key)) : nil } ?? 0 }
    func bool(_ key: String) -> Bool {
        settings.flatMap { has(key) ? g_settings_get_boolean($0, key) != 0 : nil } ?? false
    }
    func string(_ key: String) -> String {
        guard let settings, has(key), let value = g_settings_get_string(settings, key) else { return "" }
        defer { g_free(value) }
        return String(cString: value)
    }
    func strings(_ key: String) -> [String] {
        guard let settings, has(key), let list = g_settings_get_strv(settings, key) else { return [] }
        defer { g_strfreev(list) }
        var out: [String] = []
        var index = 0
        while let item = list[index] {
            out.append(String(cString: item))
            index += 1
        }
        return out
    }

    func set(_ key: String, int value: Int) {
        guard let settings, has(key), !refreshing else { return }
        if Int(g_settings_get_int(settings, key)) != value { g_settings_set_int(settings, key, gint(value)) }
    }
    func set(_ key: String, bool value: Bool) {
        guard let settings, has(key), !refreshing else { return }
        if (g_settings_get_boolean(settings, key) != 0) != value {
            g_settings_set_boolean(settings, key, value ? 1 : 0)
        }
    }
    func set(_ key: String, string value: String) {
        guard let settings, has(key), !refreshing else { return }
        if string(key) != value { g_settings_set_string(settings, key, value) }
    }
    func set(_ key: String, strings value: [String]) {
        guard let settings, has(key), !refreshing else { return }
        var pointers: [UnsafeMutablePointer<CChar>?] = value.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        pointers.withUnsafeBufferPointer { buffer in
            made(buffer.baseAddress).withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                _ = g_settings_set_strv(settings, key, $0)
            }
        }
    }
    func reset(_ key: String) {
        guard let settings, has(key) else { return }
        g_settings_reset(settings, key)
    }
}
