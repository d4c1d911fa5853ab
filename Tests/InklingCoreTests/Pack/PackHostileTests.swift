import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// Hostile packs with valid checksums: a section table whose entries overlap, a character
/// table too full for open addressing (each suggestion used to take seconds), metadata that
/// is not plain text. Each must be refused at load with a clear error.
@Suite("Hostile packs")
struct PackHostileTests {
    static var fixture: [UInt8] { FixturePacks.englishBytes }

    static func openError(_ bytes: [UInt8]) -> PackError? { PackCorruptionTests.openError(bytes) }

    static func containerError(_ bytes: [UInt8]) -> PackError? {
        do {
            _ = try PackFile(data: Data(bytes))
            return nil
        } catch {
            return error
        }
    }

    static func malformedReason(_ error: PackError?, tag expected: String? = nil) -> String? {
        guard case .malformed(let tag, let reason) = error else { return nil }
        if let expected, tag != expected { return nil }
        return reason
    }

    /// The byte offset of a section table entry (its tag; offset at +8, length at +12).
    static func entry(_ index: Int) -> Int { 32 + 16 * index }

    static func field(_ index: Int, _ at: Int, in bytes: [UInt8]) -> UInt32 {
        PackSurgery.get(UInt32.self, at: entry(index) + at, in: bytes)
    }

    // MARK: Section table

    @Test("a section pointing into the section table is refused")
    func sectionInsideTheTable() {
        var bytes = Self.fixture
        PackSurgery.put(UInt32(Self.entry(1)), at: Self.entry(0) + 8, in: &bytes)
        PackSurgery.put(UInt32(16), at: Self.entry(0) + 12, in: &bytes)
        PackSurgery.fixChecksum(&bytes)
        let reason = Self.malformedReason(Self.containerError(bytes), tag: "VKEY")
        #expect(reason?.contains("section table") == true, "\(String(describing: reason))")
    }

    @Test("two sections sharing bytes are refused")
    func overlappingSections() {
        var bytes = Self.fixture
        // VKOF starts inside VKEY.
        let keyOffset = Self.field(0, 8, in: bytes)
        let keyLength = Self.field(0, 12, in: bytes)
        #expect(keyLength > 8)
        PackSurgery.put(keyOffset + 8, at: Self.entry(1) + 8, in: &bytes)
        PackSurgery.fixChecksum(&bytes)
        let error = Self.containerError(bytes)
        #expect(Self.malformedReason(error)?.contains("overlaps section") == true, "\(String(describing: error))")

        // The same bytes twice, as two sections.
        var same = Self.fixture
        PackSurgery.put(keyOffset, at: Self.entry(1) + 8, in: &same)
        PackSurgery.put(keyLength, at: Self.entry(1) + 12, in: &same)
        PackSurgery.fixChecksum(&same)
        #expect(Self.malformedReason(Self.containerError(same))?.contains("overlaps") == true)
    }

    @Test("a misaligned section is refused")
    func misalignedSection() {
        var bytes = Self.fixture
        let offset = Self.field(0, 8, in: bytes)
        let length = Self.field(0, 12, in: bytes)
        PackSurgery.put(offset + 4, at: Self.entry(0) + 8, in: &bytes)
        PackSurgery.put(length - 4, at: Self.entry(0) + 12, in: &bytes)
        PackSurgery.fixChecksum(&bytes)
        #expect(Self.malformedReason(Self.containerError(bytes), tag: "VKEY")?.contains("aligned") == true)
    }

    @Test("a section tag listed twice is refused")
    func duplicateTag() {
        var bytes = Self.fixture
        PackSurgery.put(PackFormat.tag("VKEY"), at: Self.entry(1), in: &bytes)
        PackSurgery.fixChecksum(&bytes)
        #expect(Self.malformedReason(Self.containerError(bytes), tag: "VKEY")?.contains("twice") == true)
    }

    @Test("empty sections may share an offset with their neighbour")
    func emptySectionsDoNotOverlap() throws {
        var writer = PackWriter()
        writer.add("AAAA", bytes: [1, 2, 3])
        writer.add("EMPT", bytes: [])
        writer.add("BBBB", bytes: [4])
        let file = try PackFile(data: Data(writer.serialize()))
        #expect(try file.bytes("EMPT").isEmpty)
        #expect(Array(try file.bytes("BBBB")) == [4])
    }

    // MARK: Character model hash table

    static func slots(of bytes: [UInt8]) throws -> [UInt64] {
        PackSurgery.integers(try PackSurgery.sections(of: bytes).first { $0.tag == "CMHT" }!.bytes, as: UInt64.self)
    }

    /// A nonzero slot that matches no real n-gram's fingerprint in practice.
    static func filler(_ index: Int) -> UInt64 { (UInt64(index) &* 0x9E37_79B9 | 1) << 24 | 0xFFF }

    @Test("the fixture's table is a plausible one: under 80 % full, short runs")
    func fixtureTable() throws {
        let slots = try Self.slots(of: Self.fixture)
        #expect(slots.count == 8192)
        #expect(slots.filter { $0 != 0 }.count * 10 < slots.count * 8)
        #expect(FixturePacks.english.characterModel.maximumProbes < 200)
    }

    @Test("a full character table is refused (each lookup used to probe the whole table)")
    func fullTable() throws {
        let bytes = try PackSurgery.editing("CMHT", as: UInt64.self, of: Self.fixture) { slots in
            for index in slots.indices where slots[index] == 0 { slots[index] = Self.filler(index) }
        }
        let reason = Self.malformedReason(Self.openError(bytes), tag: "CMHT")
        #expect(reason?.contains("full") == true, "\(String(describing: reason))")
    }

    @Test("a character table over 90 % full is refused; 90 % exactly opens")
    func loadFactor() throws {
        func filled(to occupied: Int) throws -> [UInt8] {
            try PackSurgery.editing("CMHT", as: UInt64.self, of: Self.fixture) { slots in
                var count = slots.filter { $0 != 0 }.count
                // Spread the extra entries out (every 7th free slot first) so no run grows long.
                for pass in 0..<7 {
                    for index in stride(from: pass, to: slots.count, by: 7) where count < occupied && slots[index] == 0
                    {
                        slots[index] = Self.filler(index)
                        count += 1
                    }
                }
            }
        }
        let limit = 8192 * 9 / 10
        let over = Self.openError(try filled(to: limit + 1))
        #expect(Self.malformedReason(over, tag: "CMHT")?.contains("full") == true, "\(String(describing: over))")
        let at = Self.openError(try filled(to: limit))
        #expect(Self.malformedReason(at, tag: "CMHT")?.contains("full") != true, "\(String(describing: at))")
    }

    /// The fixture with slots `start ..< start + length` occupied and the slots on either side empty.
    static func withRun(start: Int, length: Int) throws -> [UInt8] {
        try PackSurgery.editing("CMHT", as: UInt64.self, of: Self.fixture) { slots in
            let mask = slots.count - 1
            for step in 0..<length where slots[(start + step) & mask] == 0 {
                slots[(start + step) & mask] = Self.filler(step)
            }
            slots[(start - 1) & mask] = 0
            slots[(start + length) & mask] = 0
        }
    }

    @Test("a run of occupied slots longer than the bound is refused, even at a low load factor")
    func longRun() throws {
        let tooLong = CharacterModel.maximumRunLength + 1
        // Wrapping around the end of the table counts as one run.
        for start in [100, 8192 - 1000] {
            let error = Self.openError(try Self.withRun(start: start, length: tooLong))
            #expect(
                Self.malformedReason(error, tag: "CMHT")?.contains("run of \(tooLong)") == true,
                "\(String(describing: error))")
        }
    }

    @Test("lookups read at most maximumProbes slots, counted, not timed")
    func boundedProbes() throws {
        let length = CharacterModel.maximumRunLength
        let start = 3000
        let pack = try LanguagePack(data: Data(try Self.withRun(start: start, length: length)))
        let model = pack.characterModel
        #expect(model.maximumProbes == length + 1)
        // A key whose home slot is the run's first slot, absent from the table, walks the
        // whole run and stops at the empty slot after it.
        var rng = SplitMix64(seed: 7)
        var walkedWholeRun = false
        for _ in 0..<200_000 {
            let key = UInt64.random(in: 0...UInt64.max, using: &rng)
            let (payload, probes) = model.probe(key)
            #expect(probes >= 1 && probes <= model.maximumProbes)
            if Int(truncatingIfNeeded: CharacterModel.mix(key)) & model.mask == start, payload == nil {
                #expect(probes == length + 1)
                walkedWholeRun = true
                break
            }
        }
        #expect(walkedWholeRun)
        // Real n-grams are still found.
        let fixture = FixturePacks.english.characterModel
        let symbols = fixture.symbols("the ".unicodeScalars)
        let key = symbols.withUnsafeBufferPointer { CharacterModel.packedKey($0, from: 0, to: 3) }
        #expect(fixture.lookup(key) != nil)
    }

    // MARK: Metadata

    @Test(
        "metadata with control or bidi characters, or not UTF-8, is refused",
        arguments: ["name=Evil\u{1B}[2J", "name=a\rb", "name=\u{202E}kcap", "version=1\u{0}", "language=en\u{2066}"])
    func hostileMetadata(line: String) throws {
        let bytes = try PackSurgery.editing("META", of: Self.fixture) { $0 += Array(("\n" + line).utf8) }
        #expect(Self.malformedReason(Self.openError(bytes), tag: "META") != nil)
    }

    @Test func metadataNotUTF8() throws {
        let bytes = try PackSurgery.editing("META", of: Self.fixture) { $0 += [0x0A, 0x6E, 0x3D, 0xFF, 0xFE] }
        #expect(Self.malformedReason(Self.openError(bytes), tag: "META") == "not UTF-8")
    }
}
