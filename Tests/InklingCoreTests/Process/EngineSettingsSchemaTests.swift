import Foundation
import InklingCore
import Testing

@Suite("GSettings schema id")
struct EngineSettingsSchemaTests {
    /// The id every program opens is the one the installed schema file declares.
    @Test func theIdIsTheOneTheSchemaFileDeclares() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let file = root.appending(path: "data/gschema/\(EngineSettingsSchema.id).gschema.xml")
        let xml = try String(contentsOf: file, encoding: .utf8)
        #expect(xml.contains("<schema id=\"\(EngineSettingsSchema.id)\""))
    }
}
