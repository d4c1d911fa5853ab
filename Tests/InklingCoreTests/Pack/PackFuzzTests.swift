import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A seeded pack fuzzer: mutates a valid pack (bytes inside sections, integer fields set to
/// edge values, section lengths, the section table, the header, runs of character-table slots)
/// with the checksum fixed, so that the mutations reach the structural checks. Loading must
/// either throw a `PackError` or give a pack whose lookups are bounded and whose suggestions
/// terminate.
///
/// `INKLING_PACK_FUZZ_SEED=N` and `INKLING_PACK_FUZZ_MUTATIONS=N` override the seed and count;
/// a failure names the seed and round, and the round alone reproduces it.
@Suite("Pack fuzzer")
struct PackFuzzTests {
    static func environment(_ name: String) -> UInt64? {
        guard let value = getenv(name) else { return nil }
        return UInt64(String(cString: value))
    }

    static let seed = environment("INKLING_PACK_FUZZ_SEED") ?? 0x1A7C_F00D
    static let mutations = Int(environment("INKLING_PACK_FUZZ_MUTATIONS") ?? 10_000)

    /// A small pack (1,024-slot character table) so that 10^4 loads stay within seconds.
    static let base: [UInt8] = FixturePacks.build(
        wordFrequencies: EnglishFixture.wordFrequencies, corpus: EnglishFixture.corpus,
        surfaceForms: EnglishFixture.surfaceForms)

    /// Values that sit on the edges of counts, offsets and lengths.
    static func edgeValue(_ count: Int, using rng: inout SplitMix64) -> UInt32 {
        let choices: [UInt32] = [
            0, 1, 2, 7, 8, UInt32(truncatingIfNeeded: count - 1), UInt32(truncatingIfNeeded: count),
            UInt32(truncatingIfNeeded: count + 1), 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFFF, 0x100000,
            UInt32.random(in: 0...UInt32.max, using: &rng),
        ]
        return choices[Int.random(in: 0..<choices.count, using: &rng)]
    }

    /// One mutation of the base pack, chosen and applied with `rng`; returns its name too.
    static func mutate(
        _ sections: [(tag: String, bytes: [UInt8])], using rng: inout SplitMix64
    ) -> (name: String, bytes: [UInt8]) {
        var edited = sections
        let index = Int.random(in: 0..<edited.count, using: &rng)
        let tag = edited[index].tag
        switch Int.random(in: 0..<9, using: &rng) {
        case 0:  // bytes inside a section
            guard !edited[index].bytes.isEmpty else { break }
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let position = Int.random(in: 0..<edited[index].bytes.count, using: &rng)
                edited[index].bytes[position] =
                    [0x00, 0xFF, UInt8.random(in: 0...255, using: &rng)][Int.random(in: 0...2, using: &rng)]
            }
            return ("bytes of \(tag)", PackSurgery.assemble(edited))
        case 1:  // a 32-bit field of a section set to an edge value
            let words = edited[index].bytes.count / 4
            guard words > 0 else { break }
            let position = 4 * Int.random(in: 0..<words, using: &rng)
            let value = edgeValue(words, using: &rng)
            for byte in 0..<4 {
                edited[index].bytes[position + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(byte)))
            }
            return ("u32 of \(tag) = \(value)", PackSurgery.assemble(edited))
        case 2:  // a section shortened, lengthened or emptied
            let count = edited[index].bytes.count
            switch Int.random(in: 0...2, using: &rng) {
            case 0: edited[index].bytes.removeLast(min(count, Int.random(in: 1...16, using: &rng)))
            case 1:
                edited[index].bytes += (0..<Int.random(in: 1...16, using: &rng)).map { _ in
                    UInt8.random(in: 0...255, using: &rng)
                }
            default: edited[index].bytes = []
            }
            return ("length of \(tag)", PackSurgery.assemble(edited))
        case 3:  // a section table entry: offset, length or tag
            var bytes = PackSurgery.assemble(edited)
            let field = [0, 8, 12][Int.random(in: 0...2, using: &rng)]
            let value =
                field == 0
                ? PackFormat.tag(sections[Int.random(in: 0..<sections.count, using: &rng)].tag)
                : [
                    edgeValue(bytes.count, using: &rng),
                    UInt32(32 + 16 * Int.random(in: 0..<sections.count, using: &rng)),
                    UInt32.random(in: 0...UInt32(bytes.count), using: &rng),
                ][Int.random(in: 0...2, using: &rng)]
            PackSurgery.put(value, at: 32 + 16 * index + field, in: &bytes)
            PackSurgery.fixChecksum(&bytes)
            return ("table entry of \(tag) +\(field) = \(value)", bytes)
        case 4:  // the header's section count
            var bytes = PackSurgery.assemble(edited)
            let value = edgeValue(sections.count, using: &rng)
            PackSurgery.put(value, at: 12, in: &bytes)
            PackSurgery.fixChecksum(&bytes)
            return ("section count = \(value)", bytes)
        case 5:  // a run of character-table slots filled (a full or clustered table)
            let table = edited.firstIndex { $0.tag == "CMHT" }!
            var slots = PackSurgery.integers(edited[table].bytes, as: UInt64.self)
            guard !slots.isEmpty else { break }
            let start = Int.random(in: 0..<slots.count, using: &rng)
            let length = Int.random(in: 1...slots.count, using: &rng)
            for step in 0..<length {
                slots[(start + step) % slots.count] |= UInt64.random(in: 1...UInt64.max, using: &rng)
            }
            edited[table].bytes = PackSurgery.bytes(slots)
            return ("\(length) character slots from \(start)", PackSurgery.assemble(edited))
        case 6:  // two sections' contents swapped
            let other = Int.random(in: 0..<edited.count, using: &rng)
            let swapped = edited[index].bytes
            edited[index].bytes = edited[other].bytes
            edited[other].bytes = swapped
            return ("\(tag) swapped with \(edited[other].tag)", PackSurgery.assemble(edited))
        case 7:  // a section removed or listed twice
            if Bool.random(using: &rng) {
                edited.remove(at: index)
                return ("\(tag) removed", PackSurgery.assemble(edited))
            }
            edited.append(edited[index])
            return ("\(tag) twice", PackSurgery.assemble(edited))
        default:  // a byte anywhere (header and table included), checksum fixed
            var bytes = PackSurgery.assemble(edited)
            let position = Int.random(in: 12..<bytes.count, using: &rng)
            bytes[position] ^= UInt8.random(in: 1...255, using: &rng)
            if position >= 32 || position < 24 { PackSurgery.fixChecksum(&bytes) }
            return ("byte \(position)", bytes)
        }
        return ("unchanged", PackSurgery.assemble(edited))
    }

    @Test("10^4 seeded mutations: each pack is refused with a PackError or is safe and bounded to use")
    func fuzz() throws {
        print(
            "pack fuzzer: seed \(Self.seed), \(Self.mutations) mutations (INKLING_PACK_FUZZ_SEED, INKLING_PACK_FUZZ_MUTATIONS)"
        )
        let sections = try PackSurgery.sections(of: Self.base)
        var refused: [String: Int] = [:]
        var accepted = 0
        var reasons = Set<String>()
        for round in 0..<Self.mutations {
            var rng = SplitMix64(seed: Self.seed &+ UInt64(round))
            let (name, bytes) = Self.mutate(sections, using: &rng)
            let context = Comment(rawValue: "seed \(Self.seed) round \(round): \(name)")
            let pack: LanguagePack
            do {
                pack = try LanguagePack(data: Data(bytes))
            } catch {
                if case .malformed(let tag, let reason) = error { reasons.insert("\(tag): \(reason.prefix(24))") }
                refused["\(error)".prefix(30).description, default: 0] += 1
                continue
            }
            accepted += 1
            // Every lookup is bounded by a small, load-time probe count.
            let model = pack.characterModel
            #expect(model.maximumProbes <= CharacterModel.maximumRunLength + 1, context)
            for _ in 0..<8 {
                let probes = model.probe(UInt64.random(in: 0...UInt64.max, using: &rng)).probes
                #expect(probes >= 1 && probes <= model.maximumProbes, context)
            }
            // Everything else reachable from a key press works (a hang here is a failure too).
            for id in [0, pack.wordCount / 2, pack.wordCount - 1] {
                _ = pack.display(id)
                _ = pack.range(ofPrefix: pack.key(id))
                _ = pack.bigramSuccessors(of: id)
            }
            if accepted % 16 == 1 {
                let predictor = Predictor(pack: pack)
                for before in ["Th", "the pres", "I don'"] { _ = predictor.suggest(before: before, count: 5) }
            }
        }
        print(
            "pack fuzzer: \(accepted) accepted, \(Self.mutations - accepted) refused, \(reasons.count) distinct structural reasons"
        )
        // The generator reaches both outcomes and the structural checks, not only the checksum.
        #expect(accepted > Self.mutations / 20)
        #expect(Self.mutations - accepted > Self.mutations / 4)
        #expect(reasons.count > 20)
    }
}
