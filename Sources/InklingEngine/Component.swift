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
          <license>see /usr/share/doc/inkling/copyright</license>
          <homepage>file:///usr/share/doc/inkling/</homepage>
          <textdomain>inkling</textdomain>
          <engines>
            <engine>
              <name>inkling</name>
              <language>en</language>
              <license>see /usr/share/doc/inkling/copyright</license>
              <author>The Inkling authors</author>
              <icon>accessories-text-editor</icon>
              <layout>default</layout>
              <longname>Inkling (English)</longname>
              <description>Predictive text: word completions and next-word suggestions</description>
              <rank>50</rank>
              <symbol>✎</symbol>
            </engine>
          </engines>
        </component>

        """

    /// The component XML with `exec` (an absolute path) as the engine command.
    static func xml(exec: String) -> String {
        template.replacing("@EXEC@", with: escape(exec))
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
