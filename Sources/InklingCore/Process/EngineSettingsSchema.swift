/// The GSettings schema that holds the input method's settings: the one name the engine, the
/// `inkling` command and the settings app open (installed from `data/*.gschema.xml`).
public enum EngineSettingsSchema {
    /// The schema id.
    public static let id = "org.freedesktop.ibus.engine.inkling"
}
