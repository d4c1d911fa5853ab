/// A settings change the user asked for through the session (its off-the-record key) or the
/// input-source menu (`PropertyMenu`).
///
/// Settings flow one way: the session never writes `SessionSettings`; it reports an intent in
/// its result, the glue writes it to GSettings, and the settings reader, the one writer, applies
/// the new settings to every session with `InputSession.apply(_:)` (librime's
/// `Context::set_option` and `option_update_notifier`: set in one place, then announced).
public enum SessionIntent: Equatable, Sendable {
    /// Off the record on or off (`off-the-record`).
    case offTheRecordChanged(Bool)
    /// This language first in `languages`: its pack is loaded and then becomes `language`.
    case languageChosen(String)
}

extension SessionSettings {
    /// These settings once `intent` is applied. A chosen language changes nothing here until
    /// its pack is loaded (`language` is the active pack's).
    public func applying(_ intent: SessionIntent) -> SessionSettings {
        var settings = self
        switch intent {
        case .offTheRecordChanged(let value): settings.offTheRecord = value
        case .languageChosen: break
        }
        return settings
    }

    /// These settings once every intent is applied, in order.
    public func applying(_ intents: [SessionIntent]) -> SessionSettings {
        intents.reduce(self) { $0.applying($1) }
    }
}
