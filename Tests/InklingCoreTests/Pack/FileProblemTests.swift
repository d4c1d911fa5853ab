import FoundationEssentials
import Testing

@testable import InklingCore

/// File errors become a few plain words, never a `CocoaError(…)` dump.
@Suite("FileProblem")
struct FileProblemTests {
    @Test func aFolderInPlaceOfAPackIsNamedPlainly() throws {
        let folder = FileManager.default.temporaryDirectory.appending(
            path: "inkling-folder-\(UInt32.random(in: 0...UInt32.max)).inkpack"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            _ = try PackFile(path: folder)
            Issue.record("opened a folder as a pack")
        } catch {
            #expect(error.description == "cannot read language pack \(folder): it is a folder, not a file")
        }
    }

    @Test func aMissingPackIsNamedPlainly() {
        let path = "/nonexistent-inkling-\(UInt32.random(in: 0...UInt32.max))/de.inkpack"
        do {
            _ = try PackFile(path: path)
            Issue.record("opened a missing file")
        } catch {
            #expect(error.description == "cannot read language pack \(path): no such file")
            #expect(!error.description.contains("CocoaError"))
        }
    }

    @Test func cocoaErrorsWithoutAnUnderlyingErrnoStillReadPlainly() {
        #expect(FileProblem.reason(CocoaError(.fileReadNoPermission)) == "permission denied")
        #expect(FileProblem.reason(CocoaError(.fileWriteOutOfSpace)) == "the disk is full")
        #expect(FileProblem.reason(CocoaError(.fileReadUnknown)) == "it cannot be read")
        #expect(FileProblem.reason(CocoaError(.fileWriteUnknown)) == "it cannot be written")
        #expect(FileProblem.reason(PackError.badMagic) == PackError.badMagic.description)
        #expect(FileProblem.reason(posixCode: 21) == "it is a folder, not a file")
        #expect(FileProblem.reason(posixCode: 9999) == "system error 9999")
    }
}
