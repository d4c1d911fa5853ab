import InklingCore

/// What the shortcut recorder makes of a key press: an accelerator the engine's `KeyBinding`
/// parser accepts, or a sentence saying why the key cannot be used.
public enum ShortcutRecording: Equatable, Sendable {
    /// Keep listening (a modifier alone was pressed).
    case waiting
    /// Escape: leave the binding as it was.
    case cancelled
    /// BackSpace alone: turn the key off (the schema's empty string).
    case disabled
    /// The accelerator to store, e.g. `<Control><Alt>Return`.
    case accepted(String)
    /// Refused, with the reason to show.
    case refused(String)
}

/// Modifier state of a key press, as the recorder sees it (GDK's masks, translated by the glue).
public struct ShortcutModifiers: OptionSet, Equatable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let control = ShortcutModifiers(rawValue: 1)
    public static let alt = ShortcutModifiers(rawValue: 2)
    public static let shift = ShortcutModifiers(rawValue: 4)
    public static let superKey = ShortcutModifiers(rawValue: 8)
}

/// The decisions of the shortcut recorder for the fix, panel and keep keys.
public enum Shortcut {
    static let modifierKeyNames: Set<String> = [
        "shift_l", "shift_r", "control_l", "control_r", "alt_l", "alt_r", "meta_l", "meta_r",
        "super_l", "super_r", "hyper_l", "hyper_r", "caps_lock", "iso_level3_shift", "num_lock",
    ]

    /// A key press (GDK's key name, e.g. `Return`, `k`, `F5`) turned into what to store.
    ///
    /// Only what `KeyBinding(accelerator:)` parses is accepted: anything else would be stored,
    /// then ignored by the engine with a log line. A printable key needs Control, Alt or Super:
    /// alone (or with Shift) it would take that character away from typing while a fix is shown.
    public static func record(keyName: String, modifiers: ShortcutModifiers) -> ShortcutRecording {
        let lower = keyName.lowercased()
        if modifierKeyNames.contains(lower) { return .waiting }
        if modifiers.isEmpty && lower == "escape" { return .cancelled }
        if modifiers.isEmpty && lower == "backspace" { return .disabled }
        var accelerator = ""
        if modifiers.contains(.control) { accelerator += "<Control>" }
        if modifiers.contains(.alt) { accelerator += "<Alt>" }
        if modifiers.contains(.shift) { accelerator += "<Shift>" }
        if modifiers.contains(.superKey) { accelerator += "<Super>" }
        // GDK names upper-case letters when Shift is down; the engine matches letters in lower case.
        let name = keyName.count == 1 ? keyName.lowercased() : keyName
        accelerator += name
        guard KeyBinding(accelerator: accelerator) != nil else {
            return .refused(
                tr(
                    "Inkling cannot use {keys}: choose a letter, a digit, an F key, Return, space, Tab or an arrow key, with Control or Alt.",
                    ["keys": label(keyName: keyName, modifiers: modifiers)]))
        }
        let isFunctionKey = lower.hasPrefix("f") && lower.count > 1 && lower.dropFirst().allSatisfy(\.isNumber)
        let typesSomething =
            !isFunctionKey
            && !["up", "down", "left", "right", "page_up", "page_down", "home", "end", "escape"].contains(lower)
        if typesSomething && modifiers.intersection([.control, .alt, .superKey]).isEmpty {
            return .refused(
                tr(
                    "{keys} alone is used for typing: add Control or Alt.",
                    ["keys": label(keyName: keyName, modifiers: modifiers)]))
        }
        return .accepted(accelerator)
    }

    /// A stored accelerator as a person reads it: `<Control><Alt>Return` → `Ctrl+Alt+Return`;
    /// empty → `Off`; one the engine cannot parse says so.
    public static func label(accelerator: String) -> String {
        let trimmed = accelerator.trimmed()
        if trimmed.isEmpty { return tr("Off") }
        guard KeyBinding(accelerator: String(trimmed)) != nil else {
            return tr("Not understood ({accelerator})", ["accelerator": String(trimmed)])
        }
        var rest = Substring(trimmed)
        var modifiers: ShortcutModifiers = []
        while rest.hasPrefix("<"), let close = rest.firstIndex(of: ">") {
            switch rest[rest.index(after: rest.startIndex)..<close].lowercased() {
            case "control", "ctrl", "primary": modifiers.insert(.control)
            case "alt", "mod1": modifiers.insert(.alt)
            case "shift": modifiers.insert(.shift)
            default: modifiers.insert(.superKey)
            }
            rest = rest[rest.index(after: close)...]
        }
        return label(keyName: String(rest), modifiers: modifiers)
    }

    static func label(keyName: String, modifiers: ShortcutModifiers) -> String {
        var parts: [String] = []
        if modifiers.contains(.control) { parts.append("Ctrl") }
        if modifiers.contains(.alt) { parts.append("Alt") }
        if modifiers.contains(.shift) { parts.append("Shift") }
        if modifiers.contains(.superKey) { parts.append("Super") }
        let names = [
            "space": "Space", "return": "Return", "backspace": "Backspace", "tab": "Tab", "page_up": "Page Up",
            "page_down": "Page Down",
        ]
        let key = names[keyName.lowercased()] ?? (keyName.count == 1 ? keyName.uppercased() : keyName)
        parts.append(key)
        return parts.joined(separator: "+")
    }
}
