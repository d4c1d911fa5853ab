import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// A pack on disk may be half-downloaded, bit-rotted or hostile: opening it must throw a
/// `PackError`, never crash, and never hand out a pack whose reads could go out of bounds.
@Suite("Pack corruption")
struct PackCorruptionTests {
    static var fixture: [UInt8] { FixturePacks.englishBytes }

    /// Opens pack bytes as a language pack; returns the error, or nil if it opened.
    static func openError(_ bytes: [UInt8]) -> PackError? {
        do {
            _ = try LanguagePack(data: Data(bytes))
            return nil
        } catch {
            return error
        }
    }

    static func isMalformed(_ error: PackError?, tag expected: String) -> Bool {
        if case .malformed(let tag, _) = error { return tag == expected }
        return false
    }

    // MARK: Truncation and padding

    @Test("truncation anywhere throws tooSmall or lengthMismatch")
    func truncation() {
        let bytes = Self.fixture
        var offsets = Array(0...40)  // every offset in the header and just past it
        let step = max(1, bytes.count / 200)
        offsets += stride(from: 41, to: bytes.count, by: step)
        offsets += [bytes.count - 8, bytes.count - 1]
        for length in offsets {
            let error = Self.openError(Array(bytes.prefix(length)))
            if length < 32 {
                #expect(error == .tooSmall(size: length), "truncated to \(length)")
            } else {
                #expect(error == .lengthMismatch(header: UInt64(bytes.count), actual: length), "truncated to \(length)")
            }
        }
        #expect(Self.openError(bytes) == nil)
    }

    @Test func padding() {
        let bytes = Self.fixture
        for extra in [1, 7, 8, 4096] {
            let error = Self.openError(bytes + [UInt8](repeating: 0, count: extra))
            #expect(error == .lengthMismatch(header: UInt64(bytes.count), actual: bytes.count + extra))
        }
    }

    // MARK: Bit flips

    @Test("500 seeded single-bit flips in the payload are all caught by the checksum")
    func randomBitFlips() {
        var rng = SplitMix64(seed: 0x5EED)
        var bytes = Self.fixture
        for _ in 0..<500 {
            let position = Int.random(in: 32..<bytes.count, using: &rng)
            let bit = UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            bytes[position] ^= bit
            #expect(Self.openError(bytes) == .checksumMismatch, "bit \(bit) of byte \(position)")
            bytes[position] ^= bit
        }
    }

    @Test("every single-bit flip in the header throws")
    func headerBitFlips() {
        var bytes = Self.fixture
        for position in 0..<32 {
            for bit in 0..<8 {
                bytes[position] ^= 1 << bit
                let error = Self.openError(bytes)
                #expect(error != nil, "bit \(bit) of header byte \(position) was not detected")
                switch position {
                case 0..<8: #expect(error == .badMagic)
                case 8..<12:
                    #expect(
                        error == .unsupportedVersion(found: 1 ^ (1 << UInt32(8 * (position - 8) + bit)), supported: 1))
                case 16..<24: #expect({ if case .lengthMismatch = error { true } else { false } }())
                case 24..<32: #expect(error == .checksumMismatch)
                default: break  // the section count: any error will do
                }
                bytes[position] ^= 1 << bit
            }
        }
    }

    // MARK: Wrong format

    @Test func badMagic() {
        for magic in ["INKPACK1", "inkpack\0", "\0\0\0\0\0\0\0\0", "PK\u{3}\u{4}xxxx"] {
            var bytes = Self.fixture
            bytes.replaceSubrange(0..<8, with: Array(magic.utf8))
            #expect(Self.openError(bytes) == .badMagic, "\(magic.debugDescription)")
        }
        let text = Array(String(repeating: "this is not a pack\n", count: 10).utf8)
        #expect(Self.openError(text) == .badMagic)
    }

    @Test func unsupportedVersion() {
        for version: UInt32 in [0, 2, 0x0100_0000, .max] {
            var bytes = Self.fixture
            PackSurgery.put(version, at: 8, in: &bytes)
            #expect(Self.openError(bytes) == .unsupportedVersion(found: version, supported: PackFormat.version))
        }
    }

    // MARK: Valid checksum, broken structure

    @Test("a section table entry outside the file is rejected")
    func sectionOutOfBounds() {
        let base = Self.fixture
        let size = UInt32(base.count)
        let cases: [(offset: UInt32?, length: UInt32?)] = [
            (size, 1), (size + 8, 0), (0, nil), (8, nil), (31, nil), (nil, size), (nil, .max), (.max - 3, 8),
        ]
        for (offset, length) in cases {
            var bytes = base
            if let offset { PackSurgery.put(offset, at: 32 + 8, in: &bytes) }
            if let length { PackSurgery.put(length, at: 32 + 12, in: &bytes) }
            PackSurgery.fixChecksum(&bytes)
            #expect(
                Self.openError(bytes) == .sectionOutOfBounds(tag: "VKEY"),
                "offset \(String(describing: offset)), length \(String(describing: length))")
        }
    }

    @Test func sectionCount() {
        var bytes = Self.fixture
        PackSurgery.put(UInt32.max, at: 12, in: &bytes)
        #expect(Self.isMalformed(Self.openError(bytes), tag: "header"))
        PackSurgery.put(UInt32((bytes.count - 32) / 16 + 1), at: 12, in: &bytes)
        #expect(Self.isMalformed(Self.openError(bytes), tag: "header"))
        PackSurgery.put(UInt32(0), at: 12, in: &bytes)
        #expect(Self.openError(bytes) == .missingSection(tag: "META"))
    }

    @Test("every section is required", arguments: FixturePacks.sectionTags)
    func missingSection(tag: String) throws {
        let bytes = try PackSurgery.removing(tag, from: Self.fixture)
        #expect(Self.openError(bytes) == .missingSection(tag: tag))
    }

    @Test func reassemblyReproducesTheBuilderOutput() throws {
        // The surgery helpers are only trustworthy if an unedited round trip is exact.
        #expect(PackSurgery.assemble(try PackSurgery.sections(of: Self.fixture)) == Self.fixture)
        #expect(try Self.editingKeys(of: Self.fixture) { _ in } == Self.fixture)
    }

    /// One way to break a section (the checksum stays valid) and the tag the error must name.
    struct Breakage: CustomTestStringConvertible, Sendable {
        var name: String
        var tag: String
        var edit: @Sendable ([UInt8]) throws -> [UInt8]
        var testDescription: String { name }
    }

    static let wordCount = FixturePacks.english.wordCount

    /// The pack with its keys (VKEY and VKOF) rewritten.
    static func editingKeys(of bytes: [UInt8], _ edit: (inout [[UInt8]]) -> Void) throws -> [UInt8] {
        var sections = try PackSurgery.sections(of: bytes)
        let blobIndex = sections.firstIndex { $0.tag == "VKEY" }!
        let offsetsIndex = sections.firstIndex { $0.tag == "VKOF" }!
        let offsets = PackSurgery.integers(sections[offsetsIndex].bytes, as: UInt32.self).map(Int.init)
        var keys = (0..<offsets.count - 1).map { Array(sections[blobIndex].bytes[offsets[$0]..<offsets[$0 + 1]]) }
        edit(&keys)
        sections[blobIndex].bytes = keys.flatMap { $0 }
        var newOffsets: [UInt32] = [0]
        for key in keys { newOffsets.append(newOffsets.last! + UInt32(key.count)) }
        sections[offsetsIndex].bytes = PackSurgery.bytes(newOffsets)
        return PackSurgery.assemble(sections)
    }

    static let breakages: [Breakage] = [
        Breakage(name: "keys not sorted (first two swapped)", tag: "VKEY") { bytes in
            try editingKeys(of: bytes) { $0.swapAt(0, 1) }
        },
        Breakage(name: "duplicate key", tag: "VKEY") { bytes in
            try editingKeys(of: bytes) { $0[11] = $0[10] }
        },
        Breakage(name: "last key out of order", tag: "VKEY") { bytes in
            try editingKeys(of: bytes) { $0[$0.count - 1] = Array("a".utf8) }
        },
        Breakage(name: "key offset past the blob", tag: "VKOF") { bytes in
            try PackSurgery.editing("VKOF", as: UInt32.self, of: bytes) { $0[$0.count - 1] += 1 }
        },
        Breakage(name: "key offsets decreasing", tag: "VKOF") { bytes in
            try PackSurgery.editing("VKOF", as: UInt32.self, of: bytes) { $0[2] = $0[1] - 1 }
        },
        Breakage(name: "one key offset too few", tag: "VKOF") { bytes in
            try PackSurgery.editing("VKOF", as: UInt32.self, of: bytes) { $0.removeLast() }
        },
        Breakage(name: "huge key offset", tag: "VKOF") { bytes in
            try PackSurgery.editing("VKOF", as: UInt32.self, of: bytes) { $0[$0.count - 1] = .max }
        },
        Breakage(name: "display offset past the blob", tag: "VDOF") { bytes in
            try PackSurgery.editing("VDOF", as: UInt32.self, of: bytes) { $0[$0.count - 1] += 1 }
        },
        Breakage(name: "flags count mismatch", tag: "VFLG") { bytes in
            try PackSurgery.editing("VFLG", of: bytes) { $0.removeLast() }
        },
        Breakage(name: "top word id out of range", tag: "VTOP") { bytes in
            try PackSurgery.editing("VTOP", as: UInt32.self, of: bytes) { $0[3] = UInt32(wordCount) }
        },
        Breakage(name: "no words", tag: "VPRI") { bytes in
            try PackSurgery.editing("VPRI", of: bytes) { $0 = [] }
        },
        Breakage(name: "priors of odd length", tag: "VPRI") { bytes in
            try PackSurgery.editing("VPRI", of: bytes) { $0.append(0) }
        },
        Breakage(name: "bigram successor id out of range (the sentence-start id)", tag: "BGSU") { bytes in
            try PackSurgery.editing("BGSU", as: UInt32.self, of: bytes) {
                $0[0] = ($0[0] & ~0xFFFFF) | UInt32(wordCount)
            }
        },
        Breakage(name: "bigram successor id 0xFFFFF", tag: "BGSU") { bytes in
            try PackSurgery.editing("BGSU", as: UInt32.self, of: bytes) { $0[$0.count - 1] |= 0xFFFFF }
        },
        Breakage(name: "bigram offset past the entries", tag: "BGOF") { bytes in
            try PackSurgery.editing("BGOF", as: UInt32.self, of: bytes) { $0[$0.count - 1] += 1 }
        },
        Breakage(name: "bigram offsets without the sentence-start context", tag: "BGOF") { bytes in
            try PackSurgery.editing("BGOF", as: UInt32.self, of: bytes) { $0.removeLast() }
        },
        Breakage(name: "bigram weights count mismatch", tag: "BGWT") { bytes in
            try PackSurgery.editing("BGWT", of: bytes) { $0.append(0) }
        },
        Breakage(name: "trigram keys not sorted", tag: "TGKY") { bytes in
            try PackSurgery.editing("TGKY", as: UInt64.self, of: bytes) { $0.swapAt(0, 1) }
        },
        Breakage(name: "trigram keys duplicated", tag: "TGKY") { bytes in
            try PackSurgery.editing("TGKY", as: UInt64.self, of: bytes) { $0[1] = $0[0] }
        },
        Breakage(name: "trigram successor id out of range", tag: "TGSU") { bytes in
            try PackSurgery.editing("TGSU", as: UInt32.self, of: bytes) { $0[0] |= 0xFFFFF }
        },
        Breakage(name: "trigram offset past the entries", tag: "TGOF") { bytes in
            try PackSurgery.editing("TGOF", as: UInt32.self, of: bytes) { $0[$0.count - 1] += 1 }
        },
        Breakage(name: "trigram weights count mismatch", tag: "TGWT") { bytes in
            try PackSurgery.editing("TGWT", of: bytes) { $0.removeLast() }
        },
        Breakage(name: "character table of 3 slots", tag: "CMHT") { bytes in
            try PackSurgery.editing("CMHT", of: bytes) { $0 = Array($0.prefix(24)) }
        },
        Breakage(name: "empty character table", tag: "CMHT") { bytes in
            try PackSurgery.editing("CMHT", of: bytes) { $0 = [] }
        },
        Breakage(name: "character table length not a multiple of 8", tag: "CMHT") { bytes in
            try PackSurgery.editing("CMHT", of: bytes) { $0.removeLast() }
        },
        Breakage(name: "character order 1", tag: "CMOR") { bytes in
            try PackSurgery.editing("CMOR", of: bytes) { $0 = [1] }
        },
        Breakage(name: "character order 8", tag: "CMOR") { bytes in
            try PackSurgery.editing("CMOR", of: bytes) { $0 = [8] }
        },
        Breakage(name: "character order of two bytes", tag: "CMOR") { bytes in
            try PackSurgery.editing("CMOR", of: bytes) { $0 = [6, 6] }
        },
        Breakage(name: "character order missing", tag: "CMOR") { bytes in
            try PackSurgery.editing("CMOR", of: bytes) { $0 = [] }
        },
    ]

    @Test("a structurally broken section with a valid checksum is malformed", arguments: breakages)
    func structurallyBroken(_ breakage: Breakage) throws {
        let bytes = try breakage.edit(Self.fixture)
        #expect(bytes != Self.fixture)
        // The container itself is fine: the checksum matches.
        _ = try PackFile(data: Data(bytes))
        let error = Self.openError(bytes)
        #expect(Self.isMalformed(error, tag: breakage.tag), "got \(String(describing: error))")
    }

    @Test("word ids are 20 bits: a pack of 2^20 words is rejected")
    func tooManyWords() throws {
        let bytes = try PackSurgery.editing("VPRI", of: Self.fixture) { $0 = [UInt8](repeating: 0, count: 2 << 20) }
        #expect(Self.isMalformed(Self.openError(bytes), tag: "VPRI"))
    }

    // MARK: Properties

    @Test("random byte strings never crash PackFile(data:)")
    func randomBytes() {
        var rng = SplitMix64(seed: 42)
        for round in 0..<2_000 {
            let length = [Int.random(in: 0...64, using: &rng), Int.random(in: 0...2_048, using: &rng)][round % 2]
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if round % 4 == 3, length >= 8 { bytes.replaceSubrange(0..<8, with: Array("INKPACK\0".utf8)) }
            #expect(throws: PackError.self) { try PackFile(data: Data(bytes)) }
        }
    }

    @Test("random headers and section tables with valid checksums never crash the reader")
    func randomValidContainers() {
        var rng = SplitMix64(seed: 43)
        var opened = 0
        for _ in 0..<2_000 {
            let length = 32 + 8 * Int.random(in: 0...64, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            bytes.replaceSubrange(0..<8, with: Array("INKPACK\0".utf8))
            PackSurgery.put(PackFormat.version, at: 8, in: &bytes)
            PackSurgery.put(UInt32.random(in: 0...UInt32((length - 32) / 16 + 1), using: &rng), at: 12, in: &bytes)
            PackSurgery.put(UInt64(length), at: 16, in: &bytes)
            // Entries that sometimes point inside the file.
            for entry in stride(from: 32, to: length - 15, by: 16) where Bool.random(using: &rng) {
                PackSurgery.put(UInt32.random(in: 0...UInt32(length), using: &rng), at: entry + 8, in: &bytes)
                PackSurgery.put(UInt32.random(in: 0...64, using: &rng), at: entry + 12, in: &bytes)
            }
            PackSurgery.fixChecksum(&bytes)
            do {
                let file = try PackFile(data: Data(bytes))
                opened += 1
                for tag in ["META", "VKEY", "\0\0\0\0"] where file.has(tag) { _ = try? file.bytes(tag) }
                #expect(throws: PackError.self) { try LanguagePack(data: Data(bytes)) }
            } catch {
                // Thrown, not crashed: fine.
            }
        }
        #expect(opened > 100)  // the generator reaches past the container checks
    }

    @Test("random edits inside sections (checksum fixed) throw or give a usable pack")
    func randomSectionEdits() throws {
        var rng = SplitMix64(seed: 44)
        let sections = try PackSurgery.sections(of: Self.fixture)
        var rejected = 0
        var accepted = 0
        for round in 0..<400 {
            var edited = sections
            let index = Int.random(in: 0..<edited.count, using: &rng)
            guard !edited[index].bytes.isEmpty else { continue }
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let position = Int.random(in: 0..<edited[index].bytes.count, using: &rng)
                edited[index].bytes[position] = round % 3 == 0 ? 0xFF : UInt8.random(in: 0...255, using: &rng)
            }
            let bytes = PackSurgery.assemble(edited)
            do {
                let pack = try LanguagePack(data: Data(bytes))
                accepted += 1
                // Whatever was accepted must be safe to use.
                let predictor = Predictor(pack: pack)
                for before in ["", "Th", "the ", "I don'", "при", "zzz", "12 ca"] {
                    _ = predictor.suggest(before: before, count: 8)
                }
                for id in stride(from: 0, to: pack.wordCount, by: 17) {
                    _ = pack.display(id)
                    _ = pack.range(ofPrefix: pack.key(id))
                    _ = pack.bigramSuccessors(of: id)
                }
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 0 && accepted > 0)
    }
}
