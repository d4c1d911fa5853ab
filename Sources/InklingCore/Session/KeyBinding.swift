/// A key with modifiers, parsed from a GSettings accelerator such as `<Control><Alt>Return`.
public struct KeyBinding: Equatable, Sendable {
    /// The X keysym (letters in lower case).
    public var keyval: UInt32
    /// Control, Alt, Shift and Super only.
    public var modifiers: KeyModifiers

    static let relevant: KeyModifiers = [.control, .alt, .shift, .superKey, .mod4]

    public init(keyval: UInt32, modifiers: KeyModifiers) {
        self.keyval = keyval
        self.modifiers = modifiers
    }

    /// Parses an accelerator; nil for an empty or unknown one (the binding is then off).
    public init?(accelerator: String) {
        var rest = Substring(accelerator.trimmingCharacters(in: " "))
        var modifiers: KeyModifiers = []
        while rest.hasPrefix("<"), let close = rest.firstIndex(of: ">") {
            switch rest[rest.index(after: rest.startIndex)..<close].lowercased() {
            case "control", "ctrl", "primary": modifiers.insert(.control)
            case "alt", "mod1": modifiers.insert(.alt)
            case "shift": modifiers.insert(.shift)
            case "super", "mod4": modifiers.insert(.superKey)
            default: return nil
            }
            rest = rest[rest.index(after: close)...]
        }
        guard let keyval = Self.keyval(named: String(rest)) else { return nil }
        self.keyval = keyval
        self.modifiers = modifiers
    }

    private static let named: [String: UInt32] = [
        "return": Keysym.returnKey, "enter": Keysym.returnKey, "space": Keysym.space, "backspace": Keysym.backSpace,
        "tab": Keysym.tab, "escape": Keysym.escape, "up": Keysym.up, "down": Keysym.down, "left": Keysym.left,
        "right": Keysym.right, "page_up": Keysym.pageUp, "page_down": Keysym.pageDown, "home": Keysym.home,
        "end": Keysym.end, "delete": Keysym.delete, "period": 0x2E, "comma": 0x2C, "semicolon": 0x3B,
    ]

    static func keyval(named name: String) -> UInt32? {
        let lower = name.lowercased()
        if let value = named[lower] { return value }
        if lower.count == 1, let scalar = lower.unicodeScalars.first, scalar.value >= 0x20, scalar.value < 0x7F {
            return scalar.value
        }
        if lower.hasPrefix("f"), let number = UInt32(lower.dropFirst()), (1...12).contains(number) {
            return Keysym.f1 + number - 1
        }
        return nil
    }

    /// Whether a key press is this binding (letters match regardless of Shift and Caps Lock).
    public func matches(_ event: KeyEvent) -> Bool {
        var keyval = event.keyval
        if keyval >= 0x41 && keyval <= 0x5A { keyval += 0x20 }
        var mods = event.modifiers.intersection(Self.relevant)
        if mods.contains(.mod4) {
            mods.remove(.mod4)
            mods.insert(.superKey)
        }
        var wanted = modifiers
        if keyval != event.keyval {
            mods.remove(.shift)
            wanted.remove(.shift)
        }
        return keyval == self.keyval && mods == wanted
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> Substring {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return text
    }
}
