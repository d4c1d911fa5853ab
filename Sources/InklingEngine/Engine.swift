import CIBus
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// One IBus engine object and the input session behind it.
///
/// The glue only translates: IBus signals become `InputSession` calls, and the session's effects
/// are sent in order (texts and the table as the GVariants libibus would make: `IBusWire`).
/// Nothing is decided here. Every signal connection owns a reference to this object (released
/// by GLib when the engine is finalised).
@MainActor
final class EngineInstance {
    /// The engine object; nil once IBus destroyed it.
    private(set) var engine: UnsafeMutablePointer<IBusEngine>?
    /// Nil when no usable pack was found: then every key passes through.
    let session: InputSession?
    /// Dead keys and Compose sequences in front of the session (nil with the session).
    private let compose: ComposeFilter?
    private var idleQueued = false
    /// Whether an idle callback carrying a finished word's check forward is queued.
    private var checkSliceQueued = false
    private let diagnostics: MemoryDiagnostics?

    /// Engine objects alive in this process (memory diagnostics; only touched on the main thread).
    nonisolated(unsafe) static var live = 0
    private static var nextID = 0
    /// A number for traces (the order of creation in this process).
    let id: Int

    init(engine: UnsafeMutablePointer<IBusEngine>, session: InputSession?, diagnostics: MemoryDiagnostics?) {
        self.engine = engine
        self.session = session
        compose = session.map { ComposeFilter(session: $0, composer: XkbComposer.make()) }
        self.diagnostics = diagnostics
        Self.live += 1
        Self.nextID += 1
        id = Self.nextID
    }

    deinit {
        Self.live -= 1
    }

    // MARK: Signals in

    func processKey(keyval: UInt32, keycode: UInt32, state: UInt32) -> Bool {
        let modifiers = KeyModifiers(rawValue: state)
        if !modifiers.contains(.release) { diagnostics?.keyPressed() }
        PackLoader.noteKey()  // issue 18: the mapped pack's pages are given back when typing pauses
        guard let compose else { return false }
        let start = diagnostics != nil ? MemoryDiagnostics.stamp() : nil
        defer { if let start { diagnostics?.recordKey(since: start) } }
        let scalar = ibus_keyval_to_unicode(keyval)
        let event = KeyEvent(
            keyval: keyval, keycode: keycode, modifiers: modifiers,
            character: scalar == 0 ? nil : Unicode.Scalar(scalar))
        if DictationBridge.shared.processKey(self, event) { return true }
        let result = compose.processKey(event)
        if EngineTrace.enabled && !modifiers.contains(.release) {
            trace("key handled=\(result.handled) suggest=\(result.needsSuggestions)")
        }
        render(result.effects)
        if result.needsSuggestions { scheduleSuggestions() }
        EngineSettings.handle(result.intents)
        CloudBridge.shared.afterInput(self)
        return result.handled
    }

    func focusIn() {
        trace("focus-in")
        requestSurroundingText()
        compose?.cancel()
        guard let session else { return }
        registerProperties()
        render(session.focusIn())
        EngineRegistry.focusedIn(self)
        CloudBridge.shared.afterInput(self)
    }

    /// Focus-in with the input context's path and the client's kind (engines with focus ids).
    func focusIn(contextPath: String, client: String) {
        session?.setFocusClient(FocusClient(contextPath: contextPath, name: client))
        focusIn()
    }

    /// Focus-in from a daemon that does not name the input context.
    func focusInWithoutId() {
        session?.setFocusClient(nil)
        focusIn()
    }

    /// Focus-out of the input context at `contextPath` (engines with focus ids).
    func focusOut(contextPath: String) {
        focusOut()
    }

    func focusOut() {
        trace("focus-out")
        compose?.cancel()
        guard let session else { return }
        DictationBridge.shared.focusOut(self)
        render(session.focusOut())
        CloudBridge.shared.afterInput(self)
    }

    func reset() {
        trace("reset")
        compose?.cancel()
        guard let session else { return }
        render(session.reset())
    }

    func enable() {
        trace("enable")
        requestSurroundingText()
    }

    func disable() {
        trace("disable")
        DictationBridge.shared.focusOut(self)
        // The daemon has already settled the preedit (commit-on-focus-out mode); clear our state.
        compose?.cancel()
        guard let session else { return }
        render(session.reset())
    }

    func setSurroundingText(text: UnsafeMutablePointer<IBusText>?, cursor: UInt32, anchor: UInt32) {
        guard let session else { return }
        var surrounding: SurroundingText? = nil
        var result: (effects: [SessionEffect], needsSuggestions: Bool) = ([], false)
        if let raw = inkling_text_string(text), let string = String(validatingCString: raw) {
            // The session normalises the offsets (code points, or Qt's UTF-16 for context only).
            surrounding = SurroundingText(text: string, cursor: Int(cursor), anchor: Int(anchor))
            result = session.setSurroundingText(text: string, cursor: Int(cursor), anchor: Int(anchor))
        } else {
            result = session.setSurroundingText(nil)
        }
        if EngineTrace.enabled {
            let length = inkling_text_string(text).flatMap { String(validatingCString: $0) }?.unicodeScalars.count ?? -1
            trace(
                "set-surrounding-text scalars=\(length) cursor=\(cursor) anchor=\(anchor)"
                    + " valid=\(surrounding != nil) suggest=\(result.needsSuggestions)"
                    + " known=\(session.knownContext.unicodeScalars.count) echoes-preedit=\(session.clientEchoesPreedit)"
            )
        }
        render(result.effects)
        if result.needsSuggestions { scheduleSuggestions() }
        CloudBridge.shared.afterInput(self)
    }

    func setContentType(purpose: UInt32, hints: UInt32) {
        trace("set-content-type purpose=\(purpose) hints=\(hints)")
        guard let session else { return }
        render(session.setContentType(ContentType(purpose: purpose, hints: hints)))
        DictationBridge.shared.contentTypeChanged(self)
        CloudBridge.shared.afterInput(self)
    }

    func setCapabilities(_ capabilities: UInt32) {
        trace("set-capabilities caps=\(capabilities)")
        session?.setCapabilities(ClientCapabilities(rawValue: capabilities))
    }

    func candidateClicked(index: UInt32) {
        compose?.cancel()  // A click ends whatever the keys were composing.
        guard let session else { return }
        let result = session.candidateClicked(pageIndex: Int(index))
        render(result.effects)
        if result.needsSuggestions { scheduleSuggestions() }
    }

    /// Panel requests (page and highlight moves): the session decides what they move.
    func panelRequest(_ request: CandidatePanelRequest) {
        guard let session else { return }
        let result = session.panelRequest(request)
        render(result.effects)
        if result.needsSuggestions { scheduleSuggestions() }
    }

    func destroyed() {
        trace("destroyed")
        engine = nil
        CloudBridge.shared.remove(self)
        DictationBridge.shared.remove(self)
    }

    // MARK: Suggestions after the key

    /// Queues one idle callback that recomputes suggestions (never more than one at a time).
    func scheduleSuggestions() {
        guard !idleQueued, engine != nil else { return }
        idleQueued = true
        addIdle(priority: G_PRIORITY_DEFAULT_IDLE) { $0.runSuggestions() }
    }

    /// Runs `action` on this instance once, from an idle callback at `priority` (the instance
    /// stays alive until then).
    private func addIdle(priority: gint, _ action: @escaping @MainActor (EngineInstance) -> Void) {
        let box = Unmanaged.passRetained(SignalAction(self, action)).toOpaque()
        g_idle_add_full(
            priority,
            { data in
                guard let data else { return 0 }
                let box = Unmanaged<SignalAction>.fromOpaque(data).takeUnretainedValue()
                MainActor.assumeIsolated { box.action(box.instance) }
                return 0  // G_SOURCE_REMOVE
            }, box,
            { data in
                guard let data else { return }
                Unmanaged<SignalAction>.fromOpaque(data).release()
            })
    }

    private func runSuggestions() {
        idleQueued = false
        guard engine != nil, let session else { return }
        let start = diagnostics != nil ? MemoryDiagnostics.stamp() : nil
        let effects = session.refreshTable()
        let sendStart = diagnostics != nil ? MemoryDiagnostics.threadCPUTime() : 0
        if EngineTrace.enabled {
            for case .updateLookupTable(let table) in effects { trace("table candidates=\(table.candidates.count)") }
            if effects.contains(.hideLookupTable) { trace("table hidden") }
            // The page on screen stays (a longer prefix of the same words): the desktop tests
            // wait for the table of the last key, and this is it.
            if effects.isEmpty, !session.currentCandidates.isEmpty { trace("table unchanged") }
        }
        render(effects)
        if let start { diagnostics?.recordSuggestions(since: start, sendingSince: sendStart) }
        // The finished word's check, once the table is on its way: its first slice in this idle
        // callback, the rest (a long search) in later ones, each after any key that came.
        let checkStart = diagnostics != nil ? MemoryDiagnostics.stamp() : nil
        runCheckSlice()
        if let checkStart { diagnostics?.recordAfterTable(since: checkStart) }
    }

    /// Carries the finished word's check forward by one slice; queues the next slice at low
    /// priority (after pending D-Bus messages, keys among them) while a search is left.
    private func runCheckSlice() {
        guard engine != nil, let session else { return }
        let step = session.advanceFinishedWordCheck(work: SpellChecker.searchSliceWork)
        render(step.effects)
        if !step.done { scheduleCheckSlice() }
    }

    private func scheduleCheckSlice() {
        guard !checkSliceQueued, engine != nil else { return }
        checkSliceQueued = true
        addIdle(priority: G_PRIORITY_LOW) { instance in
            instance.checkSliceQueued = false
            instance.runCheckSlice()  // queues the next slice while a search is left
        }
    }

    private func requestSurroundingText() {
        guard let engine else { return }
        // Signal-only form: asks the client to send surrounding text (no reference handed out).
        ibus_engine_get_surrounding_text(engine, nil, nil, nil)
    }

    /// Commits and preedit changes, by length only (the order against focus and reset matters).
    private func traceEffect(_ effect: SessionEffect) {
        switch effect {
        case .commitText(let text): trace("commit scalars=\(text.unicodeScalars.count)")
        case .updatePreedit(let preedit): trace("preedit scalars=\(preedit.text.unicodeScalars.count)")
        case .hidePreedit: trace("preedit hidden")
        case .deleteSurroundingText(let offset, let count): trace("delete-surrounding offset=\(offset) count=\(count)")
        // Chips and notices, by event only (the desktop tests wait for a chip on this).
        case .updateAuxiliaryText: trace("aux shown")
        default: break
        }
    }

    /// The serial of the waiting fix a timer was set for, and the refusals already traced.
    private var watchedFix = 0
    private var tracedRefusals = 0

    /// A fix that waits for the client's report gets a timer (and the client is asked for its
    /// text); a refused fix leaves its reason in the trace.
    private func afterRender() {
        guard let session else { return }
        if EngineTrace.enabled, session.fixRefusals != tracedRefusals {
            tracedRefusals = session.fixRefusals
            trace("fix refused reason=\(session.lastFixRefusal?.name ?? "none")")
        }
        guard let waiting = session.waitingFix, waiting.serial != watchedFix else { return }
        watchedFix = waiting.serial
        trace("fix waiting for a report")
        requestSurroundingText()
        let target = Unmanaged.passRetained(FixWait(instance: self, serial: waiting.serial)).toOpaque()
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, guint(AwaitedFix.waitMilliseconds),
            { data in
                guard let data else { return 0 }
                let wait = Unmanaged<FixWait>.fromOpaque(data).takeUnretainedValue()
                MainActor.assumeIsolated {
                    if let session = wait.instance.session {
                        wait.instance.render(session.awaitedReportTimedOut(serial: wait.serial))
                    }
                }
                return 0  // G_SOURCE_REMOVE
            }, target,
            { data in
                guard let data else { return }
                Unmanaged<FixWait>.fromOpaque(data).release()
            })
    }

    private func trace(_ event: @autoclosure () -> String) {
        if EngineTrace.enabled { log("event engine=\(id) " + event()) }
    }

    // MARK: Effects out

    /// The menu last registered (activations are read against it).
    private var propertyMenu: PropertyMenu?

    /// Shows the language menu and the off-the-record toggle in the desktop's input-source menu.
    func registerProperties() {
        guard let engine, session != nil else { return }
        let menu = EngineSettings.propertyMenu()
        propertyMenu = menu
        func text(_ string: String) -> UnsafeMutablePointer<IBusText>? { ibus_text_new_from_string(string) }
        func state(_ on: Bool) -> IBusPropState { on ? PROP_STATE_CHECKED : PROP_STATE_UNCHECKED }
        let languageItems = ibus_prop_list_new()
        for item in menu.languages {
            let radio = ibus_property_new(
                item.key, PROP_TYPE_RADIO, text(item.label), nil, nil, 1, 1, state(item.isChosen), nil)
            ibus_prop_list_append(languageItems, radio)
        }
        let languageMenu = ibus_property_new(
            PropertyMenu.languageMenuKey, PROP_TYPE_MENU, text(menu.languageTitle), nil,
            text(tr("The language Inkling predicts and checks")), 1, 1, PROP_STATE_UNCHECKED, languageItems)
        ibus_property_set_symbol(languageMenu, text(menu.languageSymbol))
        let offTheRecord = ibus_property_new(
            PropertyMenu.offTheRecordKey, PROP_TYPE_TOGGLE, text(tr("Off the record")), nil,
            text(tr("Learn nothing from what is typed")), 1, 1, state(menu.offTheRecord), nil)
        let list = ibus_prop_list_new()
        g_object_ref_sink(list)
        ibus_prop_list_append(list, languageMenu)
        ibus_prop_list_append(list, offTheRecord)
        ibus_engine_register_properties(engine, list)
        g_object_unref(list)
    }

    /// A menu item was chosen in the desktop's input-source menu.
    func propertyActivated(name: String, state: UInt32) {
        trace("property \(name) \(state)")
        guard let intent = propertyMenu?.action(forProperty: name, state: PropertyState(rawValue: state) ?? .unchecked)
        else {
            return
        }
        EngineSettings.handle([intent])
    }

    /// Renders effects decided outside a signal (settings, language switches, notices).
    func show(_ effects: [SessionEffect]) { render(effects) }

    private func render(_ effects: [SessionEffect]) {
        guard let engine else { return }
        defer { afterRender() }
        for effect in effects {
            if EngineTrace.enabled { traceEffect(effect) }
            switch effect {
            case .commitText(let text):
                IBusWire.emit(engine, "CommitText", IBusWire.parameters(IBusWire.text(text)))
            case .updatePreedit(let preedit):
                IBusWire.emit(
                    engine, "UpdatePreeditText",
                    IBusWire.parameters(
                        IBusWire.text(preedit.text, underlined: preedit.underlined),
                        g_variant_new_uint32(guint32(max(0, preedit.cursor))), g_variant_new_boolean(1),
                        g_variant_new_uint32(guint32(IBUS_ENGINE_PREEDIT_COMMIT.rawValue))))
            case .hidePreedit:
                // An empty, hidden preedit: nothing is left for the client to commit on focus-out.
                IBusWire.emit(
                    engine, "UpdatePreeditText",
                    IBusWire.parameters(
                        IBusWire.text(""), g_variant_new_uint32(0), g_variant_new_boolean(0),
                        g_variant_new_uint32(guint32(IBUS_ENGINE_PREEDIT_COMMIT.rawValue))))
            case .updateLookupTable(let full):
                // Only the shown page's candidates go out (placeholders keep the page's place).
                let table = full.sentPage
                let cursor = guint32(max(0, min(table.cursor, max(0, table.candidates.count - 1))))
                let lookup = IBusWire.lookupTable(
                    candidates: table.candidates, labels: table.labels, pageSize: guint32(clamping: table.pageSize),
                    cursor: cursor, cursorVisible: table.cursorVisible)
                IBusWire.emit(engine, "UpdateLookupTable", IBusWire.parameters(lookup, g_variant_new_boolean(1)))
            case .hideLookupTable:
                ibus_engine_hide_lookup_table(engine)
            case .updateAuxiliaryText(let text):
                IBusWire.emit(
                    engine, "UpdateAuxiliaryText", IBusWire.parameters(IBusWire.text(text), g_variant_new_boolean(1)))
            case .hideAuxiliaryText:
                ibus_engine_hide_auxiliary_text(engine)
            case .deleteSurroundingText(let offset, let count):
                ibus_engine_delete_surrounding_text(engine, gint(offset), guint(max(0, count)))
            }
        }
    }
}

/// The user data of a waiting fix's timer: the engine and the wait it ends.
private final class FixWait {
    let instance: EngineInstance
    let serial: Int
    init(instance: EngineInstance, serial: Int) {
        self.instance = instance
        self.serial = serial
    }
}

// MARK: - Signal wiring

/// The `user_data` of a signal handler, back to the engine instance.
private func engineInstance(_ data: gpointer?) -> EngineInstance {
    guard let data else { preconditionFailure("a signal handler connected without its engine instance") }
    return Unmanaged<EngineInstance>.fromOpaque(data).takeUnretainedValue()
}

private typealias VoidHandler = @convention(c) (UnsafeMutablePointer<IBusEngine>?, gpointer?) -> Void

private let releaseInstance: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<EngineInstance>.fromOpaque(data).release()
}

@MainActor
private func connect(
    _ engine: UnsafeMutablePointer<IBusEngine>, _ signal: String, _ instance: EngineInstance, _ handler: GCallback
) {
    let data = Unmanaged.passRetained(instance).toOpaque()
    inkling_signal_connect(engine, signal, handler, data, releaseInstance)
}

/// The user data of a signal without arguments or of an idle callback: what to do, and to which
/// instance.
private final class SignalAction {
    let instance: EngineInstance
    let action: @MainActor (EngineInstance) -> Void
    init(_ instance: EngineInstance, _ action: @escaping @MainActor (EngineInstance) -> Void) {
        self.instance = instance
        self.action = action
    }
}

private let releaseAction: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<SignalAction>.fromOpaque(data).release()
}

/// Connects a signal without arguments to an action on `instance` (one C handler serves all).
@MainActor
private func connectVoid(
    _ engine: UnsafeMutablePointer<IBusEngine>, _ signal: String, _ instance: EngineInstance,
    _ action: @escaping @MainActor (EngineInstance) -> Void
) {
    let handler: VoidHandler = { _, data in
        guard let data else { return }  // connected below with its action, never nil
        let target = Unmanaged<SignalAction>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { target.action(target.instance) }
    }
    let data = Unmanaged.passRetained(SignalAction(instance, action)).toOpaque()
    inkling_signal_connect(engine, signal, unsafeBitCast(handler, to: GCallback.self), data, releaseAction)
}

/// Connects every engine signal the session cares about to `instance`.
@MainActor
func wire(_ engine: UnsafeMutablePointer<IBusEngine>, to instance: EngineInstance) {
    typealias KeyHandler =
        @convention(c) (UnsafeMutablePointer<IBusEngine>?, guint, guint, guint, gpointer?) -> gboolean
    let key: KeyHandler = { _, keyval, keycode, state, data in
        let target = engineInstance(data)
        return MainActor.assumeIsolated { target.processKey(keyval: keyval, keycode: keycode, state: state) } ? 1 : 0
    }
    connect(engine, "process-key-event", instance, unsafeBitCast(key, to: GCallback.self))

    let actions: [(String, @MainActor (EngineInstance) -> Void)] = [
        ("focus-in", { $0.focusInWithoutId() }),
        ("focus-out", { $0.focusOut() }),
        ("reset", { $0.reset() }),
        ("enable", { $0.enable() }),
        ("disable", { $0.disable() }),
        ("page-up", { $0.panelRequest(.pageUp) }),
        ("page-down", { $0.panelRequest(.pageDown) }),
        ("cursor-up", { $0.panelRequest(.cursorUp) }),
        ("cursor-down", { $0.panelRequest(.cursorDown) }),
        ("destroy", { $0.destroyed() }),
    ]
    for (signal, action) in actions { connectVoid(engine, signal, instance, action) }

    typealias SurroundingHandler =
        @convention(c) (UnsafeMutablePointer<IBusEngine>?, gpointer?, guint, guint, gpointer?) -> Void
    let surrounding: SurroundingHandler = { _, text, cursor, anchor, data in
        let target = engineInstance(data)
        let ibusText = inkling_text(text)
        MainActor.assumeIsolated { target.setSurroundingText(text: ibusText, cursor: cursor, anchor: anchor) }
    }
    connect(engine, "set-surrounding-text", instance, unsafeBitCast(surrounding, to: GCallback.self))

    // The daemon sends these instead of focus-in and focus-out once it knows the engine has focus
    // ids (it asks the engine's FocusId property when it creates its proxy).
    typealias FocusIdHandler =
        @convention(c) (UnsafeMutablePointer<IBusEngine>?, UnsafePointer<gchar>?, UnsafePointer<gchar>?, gpointer?)
        -> Void
    let focusInId: FocusIdHandler = { _, path, client, data in
        let target = engineInstance(data)
        let contextPath = path.map { String(cString: $0) } ?? ""
        let name = client.map { String(cString: $0) } ?? ""
        MainActor.assumeIsolated { target.focusIn(contextPath: contextPath, client: name) }
    }
    connect(engine, "focus-in-id", instance, unsafeBitCast(focusInId, to: GCallback.self))
    typealias FocusOutIdHandler =
        @convention(c) (UnsafeMutablePointer<IBusEngine>?, UnsafePointer<gchar>?, gpointer?) -> Void
    let focusOutId: FocusOutIdHandler = { _, path, data in
        let target = engineInstance(data)
        let contextPath = path.map { String(cString: $0) } ?? ""
        MainActor.assumeIsolated { target.focusOut(contextPath: contextPath) }
    }
    connect(engine, "focus-out-id", instance, unsafeBitCast(focusOutId, to: GCallback.self))

    typealias TwoUIntHandler = @convention(c) (UnsafeMutablePointer<IBusEngine>?, guint, guint, gpointer?) -> Void
    let contentType: TwoUIntHandler = { _, purpose, hints, data in
        let target = engineInstance(data)
        MainActor.assumeIsolated { target.setContentType(purpose: purpose, hints: hints) }
    }
    connect(engine, "set-content-type", instance, unsafeBitCast(contentType, to: GCallback.self))

    typealias UIntHandler = @convention(c) (UnsafeMutablePointer<IBusEngine>?, guint, gpointer?) -> Void
    let capabilities: UIntHandler = { _, caps, data in
        let target = engineInstance(data)
        MainActor.assumeIsolated { target.setCapabilities(caps) }
    }
    connect(engine, "set-capabilities", instance, unsafeBitCast(capabilities, to: GCallback.self))

    typealias PropertyHandler =
        @convention(c) (UnsafeMutablePointer<IBusEngine>?, UnsafePointer<gchar>?, guint, gpointer?) -> Void
    let property: PropertyHandler = { _, name, state, data in
        let target = engineInstance(data)
        let key = name.map { String(cString: $0) } ?? ""
        MainActor.assumeIsolated { target.propertyActivated(name: key, state: state) }
    }
    connect(engine, "property-activate", instance, unsafeBitCast(property, to: GCallback.self))

    typealias ClickHandler = @convention(c) (UnsafeMutablePointer<IBusEngine>?, guint, guint, guint, gpointer?) -> Void
    let clicked: ClickHandler = { _, index, _, _, data in
        let target = engineInstance(data)
        MainActor.assumeIsolated { target.candidateClicked(index: index) }
    }
    connect(engine, "candidate-clicked", instance, unsafeBitCast(clicked, to: GCallback.self))
}
