/// Which modifiers make a key press a shortcut, and which only choose the character it types.
///
/// IBus reports the X modifier state. Control, Alt (Mod1), Super (Mod4) and the virtual Super,
/// Hyper and Meta bits turn a key into a chord the application owns. The level shifts do not:
/// AltGr (ISO_Level3_Shift, Mod5 on every xkeyboard-config layout) types `ł`, `ó`, `ź` on a
/// Polish layout or `é` on US-International, and ISO_Level5_Shift (Mod3) types the fifth-level
/// characters of layouts such as German Neo; Num Lock (Mod2) only chooses keypad digits. Keys
/// typed with those are characters and join the current word.
extension KeyModifiers {
    /// Num Lock (Mod2): keypad digits instead of cursor keys.
    public static let numLock = KeyModifiers(rawValue: 1 << 4)
    /// ISO_Level5_Shift (Mod3): the fifth level of layouts that have one.
    public static let levelFive = KeyModifiers(rawValue: 1 << 5)
    /// AltGr, ISO_Level3_Shift (Mod5): the third and fourth levels (`ł`, `é`, dead keys).
    public static let levelThree = KeyModifiers(rawValue: 1 << 7)
}

extension KeyEvent {
    /// Whether this press is a shortcut for the application rather than typing (level shifts never are).
    public var isShortcut: Bool { !modifiers.intersection(.shortcut).isEmpty }
}
