import CIBus

/// The engine's signals to the daemon, serialized straight into GVariants (issue 18).
///
/// libibus sends a text or a lookup table by building GObjects (an `IBusText` and an
/// `IBusAttrList` for every candidate and label) and then serializing each of them; for the table
/// after every key that was as much of the engine's CPU time as the candidates' prediction. The
/// values sent here are exactly what `ibus_serializable_serialize` makes of those objects
/// (libibus 1.5, `src/ibustext.c`, `ibusattrlist.c`, `ibusattribute.c`, `ibuslookuptable.c`):
/// a tuple of the type name, the attachments `a{sv}` (none) and the fields in order. What never
/// changes (the empty attribute list, the labels of a page) is built once. The signals and their
/// arguments are those of `ibus_engine_commit_text`, `ibus_engine_update_preedit_text_with_mode`,
/// `ibus_engine_update_auxiliary_text` and `ibus_engine_update_lookup_table` (`src/ibusengine.c`).
@MainActor
enum IBusWire {
    /// `{sv}`, the element type of the attachments dictionary (kept for the process's life).
    private static let attachmentType = g_variant_type_new("{sv}")
    /// `v`, the element type of the candidate, label and attribute arrays.
    private static let variantType = g_variant_type_new("v")

    /// A serialized object: its type name, no attachments, then its fields.
    private static func object(_ typeName: String, _ fields: [OpaquePointer?]) -> OpaquePointer? {
        var children: [OpaquePointer?] = [
            g_variant_new_string(typeName), g_variant_new_array(attachmentType, nil, 0),
        ]
        children += fields
        return children.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }

    /// `av` of the given values, each boxed as a variant.
    private static func variants(_ values: [OpaquePointer?]) -> OpaquePointer? {
        let boxed = values.map { g_variant_new_variant($0) }
        return boxed.withUnsafeBufferPointer { g_variant_new_array(variantType, $0.baseAddress, gsize($0.count)) }
    }

    /// An `IBusAttrList` without attributes, shared by every text sent (a GVariant is immutable).
    private static let emptyAttributes: OpaquePointer? = {
        let list = object("IBusAttrList", [variants([])])
        return g_variant_ref_sink(list)
    }()

    /// An `IBusText`: `underlined` scalars from the start carry a single underline.
    static func text(_ string: String, underlined: Int = 0) -> OpaquePointer? {
        var attributes = emptyAttributes
        if underlined > 0 {
            let underline = object(
                "IBusAttribute",
                [
                    g_variant_new_uint32(guint32(IBUS_ATTR_TYPE_UNDERLINE.rawValue)),
                    g_variant_new_uint32(guint32(IBUS_ATTR_UNDERLINE_SINGLE.rawValue)),
                    g_variant_new_uint32(0), g_variant_new_uint32(guint32(clamping: underlined)),
                ])
            attributes = object("IBusAttrList", [variants([underline])])
        }
        return object("IBusText", [g_variant_new_string(string), g_variant_new_variant(attributes)])
    }

    /// The `av` of a page's labels, by their text (at most a few kinds in a process's life).
    private static var labelArrays: [[String]: OpaquePointer] = [:]

    private static func labels(_ labels: [String]) -> OpaquePointer? {
        if let known = labelArrays[labels] { return known }
        guard let array = g_variant_ref_sink(variants(labels.map { text($0) })) else { return nil }
        if labelArrays.count >= 64 { labelArrays.removeAll() }  // never in practice; bounded anyway
        labelArrays[labels] = array
        return array
    }

    /// An `IBusLookupTable` (orientation: the desktop's, as `ibus_lookup_table_new` sets it).
    static func lookupTable(
        candidates: [String], labels labelTexts: [String], pageSize: UInt32, cursor: UInt32, cursorVisible: Bool
    ) -> OpaquePointer? {
        object(
            "IBusLookupTable",
            [
                g_variant_new_uint32(pageSize), g_variant_new_uint32(cursor),
                g_variant_new_boolean(cursorVisible ? 1 : 0), g_variant_new_boolean(1),
                g_variant_new_int32(gint32(IBUS_ORIENTATION_SYSTEM.rawValue)),
                variants(candidates.map { text($0) }), labels(labelTexts),
            ])
    }

    /// Emits `signal` of the IBus engine interface with `parameters` (a tuple, consumed). An
    /// engine without a connection cannot send anything (libibus would only warn).
    static func emit(_ engine: UnsafeMutablePointer<IBusEngine>, _ signal: String, _ parameters: OpaquePointer?) {
        let service = UnsafeMutableRawPointer(engine).assumingMemoryBound(to: IBusService.self)
        guard let connection = ibus_service_get_connection(service), let path = ibus_service_get_object_path(service)
        else {
            if let parameters { g_variant_unref(g_variant_ref_sink(parameters)) }
            return
        }
        g_dbus_connection_emit_signal(connection, nil, path, "org.freedesktop.IBus.Engine", signal, parameters, nil)
    }

    /// `(v…)`: the first value boxed as a variant, then the others.
    static func parameters(_ boxed: OpaquePointer?, _ rest: OpaquePointer?...) -> OpaquePointer? {
        let children = [g_variant_new_variant(boxed)] + rest
        return children.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }
}
