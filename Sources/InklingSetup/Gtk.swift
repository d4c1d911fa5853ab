import CGtk

#if canImport(Glibc)
    import Glibc
#endif

// Small translations between Swift and GTK's C API: pointer casts between GObject types,
// signals delivered to Swift closures, and common widget set-ups. No decisions live here.

typealias Widget = UnsafeMutablePointer<GtkWidget>

/// A pointer GTK, libadwaita or GLib never leaves NULL (constructors abort rather than fail; a
/// buffer that ends in a NULL terminator has a base address). A NULL is a broken library: stop
/// with a message naming the caller.
func made<Pointer>(_ pointer: Pointer?, caller: StaticString = #function) -> Pointer {
    guard let pointer else { fatalError("inkling-setup: no object where \(caller) needs one") }
    return pointer
}

/// A GObject pointer seen as another GObject type (the C API's `GTK_WIDGET (x)` and friends;
/// the type is checked by GLib at run time on use).
@inline(__always) func cast<T, U>(_ pointer: UnsafeMutablePointer<U>?) -> UnsafeMutablePointer<T>! {
    pointer.map { UnsafeMutablePointer<T>(OpaquePointer($0)) }
}

@inline(__always) func cast<T>(_ pointer: OpaquePointer?) -> UnsafeMutablePointer<T>! {
    pointer.map { UnsafeMutablePointer<T>($0) }
}

/// The same, for the types GLib declares final (Swift sees them as `OpaquePointer`).
@inline(__always) func cast<U>(_ pointer: UnsafeMutablePointer<U>?) -> OpaquePointer! {
    pointer.map { OpaquePointer($0) }
}

@inline(__always) func cast(_ pointer: OpaquePointer?) -> OpaquePointer! { pointer }

@inline(__always) func raw(_ pointer: OpaquePointer?) -> gpointer! {
    pointer.map { UnsafeMutableRawPointer($0) }
}

@inline(__always) func opaque<U>(_ pointer: UnsafeMutablePointer<U>?) -> OpaquePointer! {
    pointer.map { OpaquePointer($0) }
}

@inline(__always) func raw<U>(_ pointer: UnsafeMutablePointer<U>?) -> gpointer! {
    pointer.map { UnsafeMutableRawPointer($0) }
}

/// Holds the Swift closure of one signal connection; released by GLib's destroy notify.
private final class SignalBox {
    let zero: (() -> Void)?
    let text: ((String) -> Void)?
    let integer: ((Int32) -> Void)?
    let key: ((UInt32, UInt32) -> Bool)?
    init(
        zero: (() -> Void)? = nil, text: ((String) -> Void)? = nil, integer: ((Int32) -> Void)? = nil,
        key: ((UInt32, UInt32) -> Bool)? = nil
    ) {
        self.zero = zero
        self.text = text
        self.integer = integer
        self.key = key
    }
}

private let releaseBox: GClosureNotify = { data, _ in
    if let data { Unmanaged<SignalBox>.fromOpaque(data).release() }
}

private func connect(_ instance: gpointer, _ signal: String, _ box: SignalBox, _ handler: GCallback) {
    _ = inkling_connect(instance, signal, handler, Unmanaged.passRetained(box).toOpaque(), releaseBox)
}

/// A signal whose handler is `(instance, user_data)`: `clicked`, `value-changed`, `search-changed`, `activate`, `apply`, `changed`.
func on(_ instance: gpointer, _ signal: String, _ body: @escaping () -> Void) {
    typealias Handler = @convention(c) (gpointer?, gpointer?) -> Void
    let handler: Handler = { _, data in
        guard let data else { return }
        Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().zero?()
    }
    connect(instance, signal, SignalBox(zero: body), unsafeBitCast(handler, to: GCallback.self))
}

/// `notify::PROPERTY`: `(instance, GParamSpec*, user_data)`.
func onNotify(_ instance: gpointer, _ property: String, _ body: @escaping () -> Void) {
    typealias Handler = @convention(c) (gpointer?, gpointer?, gpointer?) -> Void
    let handler: Handler = { _, _, data in
        guard let data else { return }
        Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().zero?()
    }
    connect(instance, "notify::" + property, SignalBox(zero: body), unsafeBitCast(handler, to: GCallback.self))
}

/// A signal whose handler is `(instance, const char*, user_data)`: GSettings `changed`, AdwMessageDialog `response`.
func onText(_ instance: gpointer, _ signal: String, _ body: @escaping (String) -> Void) {
    typealias Handler = @convention(c) (gpointer?, UnsafePointer<CChar>?, gpointer?) -> Void
    let handler: Handler = { _, text, data in
        guard let data else { return }
        Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().text?(text.map { String(cString: $0) } ?? "")
    }
    connect(instance, signal, SignalBox(text: body), unsafeBitCast(handler, to: GCallback.self))
}

/// A signal whose handler is `(instance, int, user_data)`: GtkNativeDialog `response`.
func onInteger(_ instance: gpointer, _ signal: String, _ body: @escaping (Int32) -> Void) {
    typealias Handler = @convention(c) (gpointer?, Int32, gpointer?) -> Void
    let handler: Handler = { _, value, data in
        guard let data else { return }
        Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().integer?(value)
    }
    connect(instance, signal, SignalBox(integer: body), unsafeBitCast(handler, to: GCallback.self))
}

/// GtkEventControllerKey `key-pressed`: `(controller, keyval, keycode, state, user_data) → gboolean`.
func onKeyPressed(_ controller: gpointer, _ body: @escaping (_ keyval: UInt32, _ state: UInt32) -> Bool) {
    typealias Handler = @convention(c) (gpointer?, guint, guint, GdkModifierType, gpointer?) -> gboolean
    let handler: Handler = { _, keyval, _, state, data in
        guard let data else { return 0 }
        return Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().key?(keyval, state.rawValue) == true ? 1 : 0
    }
    connect(controller, "key-pressed", SignalBox(key: body), unsafeBitCast(handler, to: GCallback.self))
}

/// Runs `body` every `milliseconds` on the main loop while it returns true.
func every(milliseconds: UInt32, _ body: @escaping () -> Bool) {
    final class Box {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
    }
    typealias Tick = @convention(c) (gpointer?) -> gboolean
    let tick: Tick = { data in
        guard let data else { return 0 }  // G_SOURCE_REMOVE
        return Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().body() ? 1 : 0
    }
    let destroy: GDestroyNotify = { data in
        guard let data else { return }
        Unmanaged<Box>.fromOpaque(data).release()
    }
    g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, tick, Unmanaged.passRetained(Box(body)).toOpaque(), destroy)
}

// MARK: Widgets

/// Gives a widget its accessible name (what screen readers and AT-SPI tests find it by).
func name(_ widget: Widget, _ label: String) {
    inkling_set_accessible_label(widget, label)
}

/// Gives the buttons inside `widget` that show only an icon (no label of their own) the
/// accessible name `label`: the ones a composite widget builds for itself.
func nameIconButtons(in widget: Widget, _ label: String) {
    nameInner(widgetsOf: "GtkButton", in: widget, label) { gtk_button_get_label(cast($0)) == nil }
}

/// Gives the widgets of GTK type `typeName` inside `widget` (that `unnamed` picks) the accessible
/// name `label`: AT-SPI would otherwise call them by their type ("GtkImage", "GtkSearchEntry").
func nameInner(
    widgetsOf typeName: String, in widget: Widget, _ label: String, unnamed: (Widget) -> Bool = { _ in true }
) {
    var child = gtk_widget_get_first_child(widget)
    while let current = child {
        let type = g_type_name_from_instance(
            UnsafeMutableRawPointer(current).assumingMemoryBound(to: GTypeInstance.self))
        if let type, String(cString: type) == typeName, unnamed(current) { name(current, label) }
        nameInner(widgetsOf: typeName, in: current, label, unnamed: unnamed)
        child = gtk_widget_get_next_sibling(current)
    }
}

func label(_ text: String, wrap: Bool = true, dim: Bool = false) -> Widget {
    let widget = made(gtk_label_new(text))
    gtk_label_set_wrap(cast(widget), wrap ? 1 : 0)
    gtk_label_set_xalign(cast(widget), 0)
    if dim { gtk_widget_add_css_class(widget, "dim-label") }
    return widget
}

func setLabel(_ widget: Widget, _ text: String) { gtk_label_set_text(cast(widget), text) }

func button(_ text: String, accessibleName: String? = nil, style: String? = nil, _ action: @escaping () -> Void)
    -> Widget
{
    let widget = made(gtk_button_new_with_label(text))
    gtk_widget_set_valign(widget, GTK_ALIGN_CENTER)
    if let style { gtk_widget_add_css_class(widget, style) }
    if let accessibleName { name(widget, accessibleName) }
    on(raw(widget), "clicked", action)
    return widget
}

func actionRow(title: String, subtitle: String? = nil) -> Widget {
    let row = made(adw_action_row_new())
    adw_preferences_row_set_title(cast(row), title)
    if let subtitle { adw_action_row_set_subtitle(cast(row), subtitle) }
    return row
}

func group(title: String, description: String? = nil) -> Widget {
    let group = made(adw_preferences_group_new())
    adw_preferences_group_set_title(cast(group), title)
    if let description { adw_preferences_group_set_description(cast(group), description) }
    return group
}

func add(_ group: Widget, _ child: Widget) { adw_preferences_group_add(cast(group), child) }

func page(title: String, icon: String, name pageName: String) -> Widget {
    let page = made(adw_preferences_page_new())
    adw_preferences_page_set_title(cast(page), title)
    adw_preferences_page_set_icon_name(cast(page), icon)
    adw_preferences_page_set_name(cast(page), pageName)
    return page
}

func add(page: Widget, _ group: Widget) { adw_preferences_page_add(cast(page), cast(group)) }

func setSensitive(_ widget: Widget, _ on: Bool) { gtk_widget_set_sensitive(widget, on ? 1 : 0) }
func setVisible(_ widget: Widget, _ on: Bool) { gtk_widget_set_visible(widget, on ? 1 : 0) }

func editableText(_ widget: Widget) -> String {
    gtk_editable_get_text(cast(widget)).map { String(cString: $0) } ?? ""
}

func setEditableText(_ widget: Widget, _ text: String) {
    if editableText(widget) != text { gtk_editable_set_text(cast(widget), text) }
}

/// Removes every child of a GtkListBox (gtk_list_box_remove_all is GTK 4.12).
func removeAllRows(_ list: Widget) {
    while let child = gtk_widget_get_first_child(list) { gtk_list_box_remove(cast(list), child) }
}
