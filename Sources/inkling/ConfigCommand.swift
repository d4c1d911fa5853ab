import CGio
import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// `inkling config list|get KEY|set KEY VALUE|reset KEY`: the engine's settings, through GSettings.
///
/// The schema `org.freedesktop.ibus.engine.inkling` is found where GLib looks for schemas: the
/// compiled system schemas (`/usr/share/glib-2.0/schemas`, installed by the package) or a folder
/// named by `GSETTINGS_SCHEMA_DIR` (for a checkout: `glib-compile-schemas DIR` on a copy of
/// `data/gschema`). Every key and value is checked here before GLib sees it: GLib aborts the
/// process on an unknown key and refuses (with only a warning) a value out of range.
enum ConfigCommand {
    static var usage: String {
        tr(
            "usage: inkling config list                 every key and its value\n       inkling config get KEY              one value\n       inkling config set KEY VALUE        change a value (checked against the schema)\n       inkling config reset KEY            back to the default\n       inkling config describe KEY         summary, type, allowed values and default\n\nvalues: true/false (also yes/no, on/off, 1/0) for switches, whole numbers for numbers,\nplain text for strings, comma-separated codes or ['en', 'de'] for lists.\nThe schema {schema} must be installed, or compiled into a folder named by\nGSETTINGS_SCHEMA_DIR.",
            ["schema": EngineSettingsSchema.id])
    }

    /// Exit statuses: 2 for a misused command line, 1 for everything the user asked that cannot be done.
    static func usageError(_ message: String) -> Never {
        warn("inkling config: \(message)\n\(usage)")
        exit(2)
    }

    static func error(_ message: String) -> Never {
        warn("inkling config: \(message)")
        exit(1)
    }

    static func run(_ arguments: [String]) {
        guard let subcommand = arguments.first else { usageError(tr("needs a subcommand")) }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "-h", "--help", "help":
            print(usage)
        case "list":
            guard rest.isEmpty else { usageError(tr("list takes no arguments")) }
            let schema = Schema.open()
            for key in schema.keys { print("\(key) \(schema.display(key))") }
        case "get":
            guard rest.count == 1 else { usageError(tr("get needs exactly one KEY")) }
            let schema = Schema.open()
            schema.requireKey(rest[0])
            print(schema.display(rest[0]))
        case "set":
            guard rest.count == 2 else { usageError(tr("set needs KEY and VALUE (quote a value with spaces)")) }
            let schema = Schema.open()
            schema.requireKey(rest[0])
            schema.set(rest[0], text: rest[1])
        case "reset":
            guard rest.count == 1 else { usageError(tr("reset needs exactly one KEY")) }
            let schema = Schema.open()
            schema.requireKey(rest[0])
            schema.reset(rest[0])
        case "describe":
            guard rest.count == 1 else { usageError(tr("describe needs exactly one KEY")) }
            let schema = Schema.open()
            schema.requireKey(rest[0])
            print(schema.describe(rest[0]))
        default:
            usageError(tr("unknown subcommand '{name}'", ["name": subcommand]))
        }
    }

    /// The looked-up schema and a GSettings object for it. Lives until the process exits.
    struct Schema {
        let schema: OpaquePointer
        let settings: UnsafeMutablePointer<GSettings>

        static func open() -> Schema {
            let hint = tr(
                "install the ibus-inkling package, or compile the schema from a checkout: mkdir -p DIR && cp data/gschema/*.gschema.xml DIR && glib-compile-schemas DIR, then run with GSETTINGS_SCHEMA_DIR=DIR"
            )
            guard let source = g_settings_schema_source_get_default() else {
                ConfigCommand.error(tr("no GSettings schemas are installed on this system; {hint}", ["hint": hint]))
            }
            guard let schema = g_settings_schema_source_lookup(source, EngineSettingsSchema.id, 1) else {
                ConfigCommand.error(
                    tr(
                        "the GSettings schema {schema} is not installed; {hint}",
                        ["schema": EngineSettingsSchema.id, "hint": hint]))
            }
            guard let settings = g_settings_new_full(schema, nil, nil) else {
                ConfigCommand.error(tr("cannot open the settings of {schema}", ["schema": EngineSettingsSchema.id]))
            }
            return Schema(schema: schema, settings: settings)
        }

        var keys: [String] {
            guard let list = g_settings_schema_list_keys(schema) else { return [] }
            defer { g_strfreev(list) }
            var keys: [String] = []
            var index = 0
            while let name = list[index] {
                keys.append(String(cString: name))
                index += 1
            }
            return keys.sorted()
        }

        /// Exits with a clear message (and the list of keys) unless the key exists: GLib would abort.
        func requireKey(_ key: String) {
            if g_settings_schema_has_key(schema, key) == 0 {
                ConfigCommand.error(
                    tr("unknown key '{key}'; the keys are: {keys}", ["key": key, "keys": keys.joined(separator: ", ")]))
            }
        }

        func key(_ name: String) -> OpaquePointer { g_settings_schema_get_key(schema, name) }

        func typeString(_ key: String) -> String {
            let schemaKey = self.key(key)
            defer { g_settings_schema_key_unref(schemaKey) }
            let string = Self.nonNull(g_variant_type_dup_string(g_settings_schema_key_get_value_type(schemaKey)))
            defer { g_free(string) }
            return String(cString: string)
        }

        /// The value as a person types it: strings bare, everything else in GVariant text form.
        func display(_ key: String) -> String {
            let value = Self.nonNull(g_settings_get_value(settings, key))
            defer { g_variant_unref(value) }
            return Self.text(of: value)
        }

        static func text(of value: OpaquePointer) -> String {
            if g_variant_is_of_type(value, gVariantType("s")) != 0 {
                return String(cString: g_variant_get_string(value, nil))
            }
            let printed = Self.nonNull(g_variant_print(value, 0))
            defer { g_free(printed) }
            return String(cString: printed)
        }

        /// The allowed values: ("range", min, max) for numbers, ("choices", [..]) for strings, or nil.
        enum Allowed {
            case any
            case range(Int64, Int64)
            case choices([String])
        }

        func allowed(_ key: String) -> Allowed {
            let schemaKey = self.key(key)
            defer { g_settings_schema_key_unref(schemaKey) }
            // ("type", <detail>): "type" is "type" (anything), "range" (<(min, max)>) or "enum" (<[choices]>).
            let range = Self.nonNull(g_settings_schema_key_get_range(schemaKey))
            defer { g_variant_unref(range) }
            let kindValue = Self.nonNull(g_variant_get_child_value(range, 0))
            let kind = String(cString: g_variant_get_string(kindValue, nil))
            g_variant_unref(kindValue)
            let boxed = Self.nonNull(g_variant_get_child_value(range, 1))
            let detail = Self.nonNull(g_variant_get_variant(boxed))
            g_variant_unref(boxed)
            defer { g_variant_unref(detail) }
            switch kind {
            case "range":
                let low = Self.nonNull(g_variant_get_child_value(detail, 0))
                let high = Self.nonNull(g_variant_get_child_value(detail, 1))
                defer {
                    g_variant_unref(low)
                    g_variant_unref(high)
                }
                return .range(Self.integer(low), Self.integer(high))
            case "enum":
                var choices: [String] = []
                for index in 0..<g_variant_n_children(detail) {
                    let child = Self.nonNull(g_variant_get_child_value(detail, index))
                    choices.append(String(cString: g_variant_get_string(child, nil)))
                    g_variant_unref(child)
                }
                return .choices(choices)
            default:
                return .any
            }
        }

        /// A GLib result that is never NULL for a key of the installed schema (a NULL is a broken GLib).
        static func nonNull<Pointer>(_ pointer: Pointer?, caller: StaticString = #function) -> Pointer {
            guard let pointer else { ConfigCommand.error("GLib returned nothing where \(caller) needs a value") }
            return pointer
        }

        static func integer(_ value: OpaquePointer) -> Int64 {
            if g_variant_is_of_type(value, gVariantType("i")) != 0 { return Int64(g_variant_get_int32(value)) }
            if g_variant_is_of_type(value, gVariantType("u")) != 0 { return Int64(g_variant_get_uint32(value)) }
            if g_variant_is_of_type(value, gVariantType("x")) != 0 { return Int64(g_variant_get_int64(value)) }
            return 0
        }

        func describe(_ key: String) -> String {
            let schemaKey = self.key(key)
            defer { g_settings_schema_key_unref(schemaKey) }
            var lines: [String] = ["\(key) (\(typeName(key)))"]
            if let summary = g_settings_schema_key_get_summary(schemaKey) {
                lines.append("  " + String(cString: summary))
            }
            switch allowed(key) {
            case .any: break
            case .range(let low, let high):
                lines.append("  " + tr("allowed: {low} to {high}", ["low": "\(low)", "high": "\(high)"]))
            case .choices(let choices):
                lines.append("  " + tr("allowed: {choices}", ["choices": choices.joined(separator: ", ")]))
            }
            let defaultValue = Self.nonNull(g_settings_schema_key_get_default_value(schemaKey))
            lines.append("  " + tr("default: {value}", ["value": Self.text(of: defaultValue)]))
            g_variant_unref(defaultValue)
            lines.append("  " + tr("current: {value}", ["value": display(key)]))
            if let description = g_settings_schema_key_get_description(schemaKey) {
                lines.append("  " + String(cString: description))
            }
            return lines.joined(separator: "\n")
        }

        func typeName(_ key: String) -> String {
            switch typeString(key) {
            case "b": return tr("true or false")
            case "i": return tr("whole number")
            case "s": return tr("text")
            case "as": return tr("list of text")
            case let other: return tr("GVariant type {type}", ["type": other])
            }
        }

        func set(_ key: String, text: String) {
            let value = parse(key, text: text)
            g_variant_ref_sink(value)
            defer { g_variant_unref(value) }
            let schemaKey = self.key(key)
            let inRange = g_settings_schema_key_range_check(schemaKey, value) != 0
            g_settings_schema_key_unref(schemaKey)
            guard inRange else {
                ConfigCommand.error(
                    tr(
                        "'{value}' is not allowed for {key}{allowed}",
                        ["value": text, "key": key, "allowed": allowedText(key)]))
            }
            guard g_settings_is_writable(settings, key) != 0 else {
                ConfigCommand.error(
                    tr("{key} is not writable (locked down by the system administrator)", ["key": key]))
            }
            guard g_settings_set_value(settings, key, value) != 0 else {
                ConfigCommand.error(tr("could not set {key}", ["key": key]))
            }
            g_settings_sync()
        }

        func reset(_ key: String) {
            g_settings_reset(settings, key)
            g_settings_sync()
        }

        func allowedText(_ key: String) -> String {
            switch allowed(key) {
            case .any: return ""
            case .range(let low, let high):
                return " (" + tr("allowed: {low} to {high}", ["low": "\(low)", "high": "\(high)"]) + ")"
            case .choices(let choices):
                return " (" + tr("allowed: {choices}", ["choices": choices.joined(separator: ", ")]) + ")"
            }
        }

        /// A floating GVariant of the key's type, or an exit with the reason.
        func parse(_ key: String, text: String) -> OpaquePointer {
            let type = typeString(key)
            let trimmed = String(text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
            switch type {
            case "b":
                switch trimmed.lowercased() {
                case "true", "yes", "on", "1": return g_variant_new_boolean(1)
                case "false", "no", "off", "0": return g_variant_new_boolean(0)
                default:
                    ConfigCommand.error(tr("{key} takes true or false, not '{value}'", ["key": key, "value": text]))
                }
            case "i":
                guard let number = Int32(trimmed) else {
                    ConfigCommand.error(
                        tr(
                            "{key} takes a whole number{allowed}, not '{value}'",
                            ["key": key, "allowed": allowedText(key), "value": text]))
                }
                return g_variant_new_int32(number)
            case "s":
                if key.hasSuffix("-key") && !Self.isAccelerator(text) {
                    ConfigCommand.error(
                        tr(
                            "{key} takes a key binding such as '<Control><Alt>Return' (modifiers <Control> <Alt> <Shift> <Super>, then one key name), or '' to disable it; not '{value}'",
                            ["key": key, "value": text]))
                }
                // The host is parsed, not prefix-matched: http://localhost.evil.example is another machine.
                if key == "cloud-endpoint" && !text.isEmpty && (try? PackDownload.check(text)) == nil {
                    ConfigCommand.error(
                        tr(
                            "cloud-endpoint takes an https:// URL (http:// only to this machine; '' for none), not '{value}'",
                            ["value": text]))
                }
                return g_variant_new_string(text)
            case "as":
                let items = Self.parseList(trimmed)
                if key == "languages" {
                    if items.isEmpty { ConfigCommand.error(tr("languages needs at least one language code, e.g. en")) }
                    for item in items where !Self.isLanguageCode(item) {
                        ConfigCommand.error(tr("'{value}' is not a language code (like en, pt_BR)", ["value": item]))
                    }
                }
                var pointers = items.map { strdup($0) }
                pointers.append(nil)
                defer { for pointer in pointers { free(pointer) } }
                // Never empty (it ends in nil), so it has a base address.
                return pointers.withUnsafeBufferPointer { buffer in
                    Self.nonNull(buffer.baseAddress).withMemoryRebound(
                        to: UnsafePointer<gchar>?.self, capacity: buffer.count
                    ) {
                        g_variant_new_strv($0, Int(items.count))
                    }
                }
            default:
                // Any other type: GVariant text form, parsed against the key's type.
                var parseError: UnsafeMutablePointer<GError>?
                guard let value = g_variant_parse(g_variant_type_new(type), text, nil, nil, &parseError) else {
                    let message = parseError.map { String(cString: $0.pointee.message) } ?? "parse error"
                    if let parseError { g_error_free(parseError) }
                    ConfigCommand.error("\(key): \(message)")
                }
                return value
            }
        }

        /// `en,de`, `en de` or the GVariant form `['en', 'de']`.
        static func parseList(_ text: String) -> [String] {
            var body = Substring(text)
            if body.hasPrefix("[") && body.hasSuffix("]") { body = body.dropFirst().dropLast() }
            return body.split(whereSeparator: { $0 == "," || $0 == " " })
                .map { String($0.filter { $0 != "'" && $0 != "\"" }) }
                .filter { !$0.isEmpty }
        }

        /// The one shared check (InklingCore's `LanguageCode`), as the engine applies it.
        static func isLanguageCode(_ code: String) -> Bool { LanguageCode.isValid(code) }

        /// GTK accelerator syntax, checked lightly: `<Modifier>`… then a key name; empty disables.
        static func isAccelerator(_ text: String) -> Bool {
            if text.isEmpty { return true }
            let modifiers: Set<String> = [
                "control", "ctrl", "primary", "alt", "shift", "super", "meta", "hyper", "mod1", "mod4",
            ]
            var rest = Substring(text)
            while rest.hasPrefix("<") {
                guard let close = rest.firstIndex(of: ">") else { return false }
                let name = rest[rest.index(after: rest.startIndex)..<close].lowercased()
                guard modifiers.contains(name) else { return false }
                rest = rest[rest.index(after: close)...]
            }
            return !rest.isEmpty && rest.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        }
    }
}

/// A GVariantType from its type string (the C macro G_VARIANT_TYPE is a cast, which Swift cannot import).
func gVariantType(_ string: StaticString) -> OpaquePointer {
    OpaquePointer(UnsafeRawPointer(string.utf8Start))
}
