import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// The container format: `PackWriter` output read back by `PackFile`.
@Suite("PackFile and PackWriter")
struct PackFileTests {
    static func sampleWriter() -> PackWriter {
        var writer = PackWriter()
        writer.add("AAAA", bytes: [1, 2, 3])
        writer.add("BBBB", integers: [UInt32(0), 1, 0xDEAD_BEEF, .max])
        writer.add("CCCC", integers: [UInt64(0x0102_0304_0506_0708), 42])
        writer.add("EMPT", bytes: [])
        writer.add("I16 ", integers: [Int16(-1), .min, .max])
        writer.add("UTF8", bytes: Array("héllo, мир".utf8))
        return writer
    }

    @Test func roundTripOfSeveralSections() throws {
        let bytes = Self.sampleWriter().serialize()
        let file = try PackFile(data: Data(bytes))
        #expect(file.size == bytes.count)
        #expect(Array(try file.bytes("AAAA")) == [1, 2, 3])
        #expect(Array(try file.array("BBBB", of: UInt32.self)) == [0, 1, 0xDEAD_BEEF, .max])
        #expect(Array(try file.array("CCCC", of: UInt64.self)) == [0x0102_0304_0506_0708, 42])
        #expect(try file.bytes("EMPT").isEmpty)
        #expect(try file.array("EMPT", of: UInt32.self).isEmpty)
        #expect(Array(try file.array("I16 ", of: Int16.self)) == [-1, .min, .max])
        #expect(String(decoding: try file.bytes("UTF8"), as: UTF8.self) == "héllo, мир")
        #expect(file.has("AAAA") && file.has("EMPT"))
        #expect(!file.has("ZZZZ"))
    }

    @Test func headerLayout() throws {
        let bytes = Self.sampleWriter().serialize()
        #expect(Array(bytes[0..<8]) == Array("INKPACK\0".utf8))
        #expect(PackSurgery.get(UInt32.self, at: 8, in: bytes) == PackFormat.version)
        #expect(PackSurgery.get(UInt32.self, at: 12, in: bytes) == 6)
        #expect(PackSurgery.get(UInt64.self, at: 16, in: bytes) == UInt64(bytes.count))
        let checksum = bytes.withUnsafeBytes { PackFormat.checksum(UnsafeRawBufferPointer(rebasing: $0[32...])) }
        #expect(PackSurgery.get(UInt64.self, at: 24, in: bytes) == checksum)
        #expect(bytes.count % 8 == 0)
        // Section table: tags in order, sections 8-byte aligned, inside the file, not overlapping.
        var previousEnd = 32 + 6 * 16
        for (index, tag) in ["AAAA", "BBBB", "CCCC", "EMPT", "I16 ", "UTF8"].enumerated() {
            let entry = 32 + index * 16
            #expect(PackSurgery.get(UInt32.self, at: entry, in: bytes) == PackFormat.tag(tag))
            let offset = Int(PackSurgery.get(UInt32.self, at: entry + 8, in: bytes))
            let length = Int(PackSurgery.get(UInt32.self, at: entry + 12, in: bytes))
            #expect(offset % 8 == 0, "\(tag) at \(offset)")
            #expect(offset >= previousEnd)
            #expect(offset + length <= bytes.count)
            previousEnd = offset + length
        }
    }

    @Test func emptyPackIsValidContainer() throws {
        let bytes = PackWriter().serialize()
        #expect(bytes.count == 32)
        let file = try PackFile(data: Data(bytes))
        #expect(!file.has("META"))
        #expect(throws: PackError.missingSection(tag: "META")) { try file.bytes("META") }
    }

    @Test func serializationIsDeterministic() {
        #expect(Self.sampleWriter().serialize() == Self.sampleWriter().serialize())
    }

    @Test func tagsAreLittleEndianASCII() {
        #expect(PackFormat.tag("ABCD") == 0x4443_4241)
        #expect(PackFormat.tag("AB") == 0x4241)
        #expect(PackFormat.tag("ABCDEF") == PackFormat.tag("ABCD"))
        #expect(PackFormat.tagName(PackFormat.tag("VKEY")) == "VKEY")
    }

    @Test func missingAndMisSizedSections() throws {
        let file = try PackFile(data: Data(Self.sampleWriter().serialize()))
        #expect(throws: PackError.missingSection(tag: "NOPE")) { try file.bytes("NOPE") }
        #expect(throws: PackError.missingSection(tag: "NOPE")) { try file.array("NOPE", of: UInt8.self) }
        // Three bytes are not a whole number of UInt16 / UInt32 values.
        #expect(throws: PackError.malformed(tag: "AAAA", reason: "length 3 is not a multiple of 2")) {
            try file.array("AAAA", of: UInt16.self)
        }
        #expect {
            try file.array("AAAA", of: UInt32.self)
        } throws: { error in
            guard case .malformed(tag: "AAAA", reason: _) = error as? PackError else { return false }
            return true
        }
    }

    @Test func checksumChangesForAnySingleByteChange() {
        var rng = SplitMix64(seed: 11)
        var bytes = (0..<1_003).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let original = bytes.withUnsafeBytes { PackFormat.checksum($0) }
        for index in bytes.indices {
            let saved = bytes[index]
            bytes[index] = saved ^ UInt8(1 << (index % 8))
            #expect(bytes.withUnsafeBytes { PackFormat.checksum($0) } != original, "byte \(index)")
            bytes[index] = saved
        }
        // Swapping two different 8-byte words is a change too.
        var swapped = bytes
        swapped.swapAt(0, 8)
        if swapped != bytes { #expect(swapped.withUnsafeBytes { PackFormat.checksum($0) } != original) }
    }

    @Test func readsFromAFile() throws {
        let bytes = Self.sampleWriter().serialize()
        let path = try FixturePacks.writeTemporaryFile(bytes)
        defer { FixturePacks.removeTemporaryFile(path) }
        let file = try PackFile(path: path)
        #expect(file.size == bytes.count)
        #expect(Array(try file.bytes("AAAA")) == [1, 2, 3])
    }

    @Test func emptyFileAndDirectory() throws {
        let path = try FixturePacks.writeTemporaryFile([])
        defer { FixturePacks.removeTemporaryFile(path) }
        #expect(throws: PackError.tooSmall(size: 0)) { try PackFile(path: path) }
        #expect {
            try LanguagePack(path: "/")
        } throws: { error in
            guard case .unreadable(path: "/", _) = error as? PackError else { return false }
            return true
        }
    }

    @Test func unreadablePath() {
        let path = "/nonexistent/inkling/\(UUID().uuidString).inkpack"
        #expect {
            try PackFile(path: path)
        } throws: { error in
            guard case .unreadable(let reported, _) = error as? PackError else { return false }
            return reported == path
        }
    }

    @Test func errorDescriptionsAreHumanReadable() {
        #expect(PackError.checksumMismatch.description.contains("checksum"))
        #expect(PackError.tooSmall(size: 3).description.contains("3 bytes"))
        #expect(PackError.unsupportedVersion(found: 9, supported: 1).description.contains("9"))
        #expect(PackError.malformed(tag: "VKEY", reason: "x").description.contains("VKEY"))
        #expect(PackError.missingSection(tag: "META").description.contains("META"))
    }

    @Test func packArrayIsBoundsChecked() async {
        #expect(PackArray<UInt32>().isEmpty)
        await #expect(processExitsWith: .failure) {
            let file = try PackFile(data: Data(PackFileTests.sampleWriter().serialize()))
            let array = try file.array("BBBB", of: UInt32.self)
            _ = array[array.count]  // traps instead of reading past the section
        }
    }
}
