import InklingCore
import Testing

@Suite("Key bindings: GSettings accelerators")
struct KeyBindingTests {
    @Test func modifiersAndNamedKeysParse() throws {
        let binding = try #require(KeyBinding(accelerator: "<Control><Alt>Return"))
        #expect(binding.keyval == Keysym.returnKey)
        #expect(binding.modifiers == [.control, .alt])
        #expect(
            KeyBinding(accelerator: " <Primary><Mod1>space ")
                == KeyBinding(keyval: Keysym.space, modifiers: [.control, .alt]))
        #expect(KeyBinding(accelerator: "<Super>F5")?.keyval == Keysym.f1 + 4)
        #expect(KeyBinding(accelerator: "<Ctrl>K")?.keyval == 0x6B, "letters in lower case")
    }

    @Test func emptyOrUnknownBindingsAreOff() {
        #expect(KeyBinding(accelerator: "") == nil)
        #expect(KeyBinding(accelerator: "<Hyper>x") == nil)
        #expect(KeyBinding(accelerator: "<Control>nosuchkey") == nil)
        #expect(KeyBinding(accelerator: "F13") == nil)
    }

    @Test func lettersMatchRegardlessOfShiftAndCapsLock() throws {
        let binding = try #require(KeyBinding(accelerator: "<Control><Alt>k"))
        #expect(binding.matches(.typing("k", modifiers: [.control, .alt])))
        #expect(binding.matches(KeyEvent(keyval: 0x4B, modifiers: [.control, .alt, .shift])), "Shift+K")
        #expect(binding.matches(.typing("k", modifiers: [.control, .alt, .capsLock])))
        #expect(!binding.matches(.typing("k", modifiers: [.control])))
    }

    @Test func shiftMattersForOtherKeysAndMod4IsSuper() throws {
        let binding = try #require(KeyBinding(accelerator: "<Super>Return"))
        #expect(binding.matches(.key(Keysym.returnKey, modifiers: [.mod4])))
        #expect(!binding.matches(.key(Keysym.returnKey, modifiers: [.mod4, .shift])))
    }
}
