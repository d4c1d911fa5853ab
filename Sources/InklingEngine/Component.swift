/// The IBus component description of the engine.
///
/// `ibus-component/inkling.xml.in` holds the same text with an `@EXEC@` placeholder; the
/// integration tests check that `--xml` prints exactly that template, filled in.
enum Component {
    static let version = "0.1.0"
    static let busName = "org.freedesktop.IBus.Inkling"
    static let engineName = "inkling"

    static let template = """
        <?xml version="1.0" encoding="utf-8"?>
        <!-- Inkling: the IBus component (generated from ibus-component/inkling.xml.in). -->
        <component>
          <name>org.freedesktop.IBus.Inkling</name>
          <description>Inkling predictive text</description>
          <exec>@EXEC@ --supervise --ibus</exec>
          <version>0.1.0</version>
          <author>The Inkling authors</author>
          <license>GPL-3.0-or-later (see /usr/share/doc/ibus-inkling/copyright)</license>
          <homepage>file:///usr/share/doc/ibus-inkling/</homepage>
          <textdomain>inkling</textdomain>
          <engines>
            <engine>
              <name>inkling</name>
              <language>en</language>
              <license>GPL-3.0-or-later (see /usr/share/doc/ibus-inkling/copyright)</license>
              <author>The Inkling authors</author>
              <icon>/usr/share/icons/hicolor/scalable/apps/org.freedesktop.ibus.engine.inkling.svg</icon>
              <layout>default</layout>
              <longname>Inkling</longname>
              <description>Predictive text: word completions and next-word suggestions</description>
              <rank>50</rank>
              <symbol>✎</symbol>
              <icon_prop_key>InputMode</icon_prop_key>
              <setup>@SETUP@</setup>
            </engine>
          </engines>
        </component>

        """

    /// The component XML with `exec` (an absolute path) as the engine command and the settings
    /// app as `<setup>` (GNOME Settings' Preferences button runs it).
    static func xml(exec: String) -> String {
        template.replacing("@EXEC@", with: escape(exec)).replacing("@SETUP@", with: escape(setupPath(exec: exec)))
    }

    /// The settings app beside the engine: the build folder holds both; an installed engine in
    /// /usr/libexec has the app on PATH in /usr/bin (where scripts/deb-build.sh puts it).
    static func setupPath(exec: String) -> String {
        let folder = exec.lastIndex(of: "/").map { String(exec[..<$0]) } ?? "."
        return (folder.hasSuffix("/libexec") ? String(folder.dropLast("libexec".count)) + "bin" : folder)
            + "/inkling-setup"
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
