import InklingCore

/// A GSettings string key with a fixed set of values, shown as a drop-down (`AdwComboRow`):
/// row index ↔ value, and the label of each row.
public struct SettingChoices: Equatable, Sendable {
    /// The GSettings key (`selection-keys`, `autocorrect`).
    public let key: String
    /// The schema's values, in the order the rows show them.
    public let values: [String]
    /// What each row says (same order as `values`).
    public let labels: [String]
    /// The row used for a value the schema does not list (the engine's own fallback).
    public let fallbackIndex: Int

    /// The row that shows `value` (a value written by hand with `gsettings` may be unknown: the
    /// row shows what the engine does with it, its fallback).
    public func index(of value: String) -> Int {
        values.firstIndex(of: value) ?? fallbackIndex
    }

    /// The value to write when row `index` is chosen; nil for an index out of range (GTK reports
    /// `GTK_INVALID_LIST_POSITION` while the list is rebuilt).
    public func value(at index: Int) -> String? {
        values.indices.contains(index) ? values[index] : nil
    }

    /// `selection-keys`: F1…F9 or 1…9 (the engine falls back to F-keys).
    public static let selectionKeys = SettingChoices(
        key: "selection-keys", values: ["f-keys", "digits"],
        labels: ["F1 … F9", tr("1 … 9 while the list is shown")], fallbackIndex: 0)

    /// `autocorrect`: what space does with a likely typo (the engine falls back to off).
    public static let autocorrect = SettingChoices(
        key: "autocorrect", values: ["off", "very-likely", "always"],
        labels: [
            tr("Off: only offer fixes"), tr("When the fix is very likely"), tr("Always take the best suggestion"),
        ],
        fallbackIndex: 0)
}

/// The candidates-per-page setting: the schema's range and the engine's clamping (`SessionSettings`).
public enum PageSize {
    public static let range = SessionSettings.pageSizes
    public static let defaultValue = SessionSettings().pageSize
    /// The value the spin button shows for what GSettings holds (clamped as the engine does).
    public static func shown(_ stored: Int) -> Int { SessionSettings.pageSize(forSetting: stored) }
}

/// The keyboard layouts the typo model knows (`KeyboardLayout`), as a drop-down.
public enum LayoutChoices {
    /// The first row: follow the active language (what the engine does without the setting).
    public static let automatic = KeyboardLayout.automatic

    /// Layout names in row order, `automatic` first.
    public static let values = [automatic] + KeyboardLayout.all.map(\.name)

    /// The row that shows `value`; unknown names show as automatic (the engine ignores them).
    public static func index(of value: String) -> Int { values.firstIndex(of: value) ?? 0 }

    /// The row's label.
    public static func label(_ value: String) -> String {
        value == automatic ? tr("Follow the language") : value.uppercased()
    }
}
