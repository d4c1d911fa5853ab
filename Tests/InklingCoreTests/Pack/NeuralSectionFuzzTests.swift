import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// The neural re-ranker's pack sections (`NGRU`, `NRRK`; issue 17) under seeded mutations:
/// bytes, 32-bit fields set to edge values, floats set to NaN or ±∞, truncation and extension,
/// with the `NGRU` checksum resealed half the time so that the mutations reach the structural
/// checks. Opening must throw a `PackError` or give a pack whose predictor, with the neural
/// re-ranker, answers with finite scores.
@Suite("Neural section fuzzer")
struct NeuralSectionFuzzTests {
    static let mutations = 1_500

    /// Recomputes an `NGRU` section's checksum (no-op for a section too short to have one).
    static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 20 else { return bytes }
        var bytes = bytes
        PackSurgery.put(CRC32.checksum(Array(bytes[20...])), at: 16, in: &bytes)
        return bytes
    }

    static func mutate(_ section: [UInt8], using rng: inout SplitMix64) -> (name: String, bytes: [UInt8]) {
        var bytes = section
        let words = bytes.count / 4
        switch Int.random(in: 0..<5, using: &rng) {
        case 0:
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            return ("bytes", bytes)
        case 1:
            let position = 4 * Int.random(in: 0..<min(words, 16), using: &rng)  // the header's fields
            let value = PackFuzzTests.edgeValue(words, using: &rng)
            PackSurgery.put(value, at: position, in: &bytes)
            return ("header u32 at \(position) = \(value)", bytes)
        case 2:
            let position = 4 * Int.random(in: 0..<words, using: &rng)
            let value = [Float.nan, .infinity, -.infinity, 3e38, -3e38][Int.random(in: 0...4, using: &rng)]
            PackSurgery.put(value.bitPattern, at: position, in: &bytes)
            return ("float at \(position) = \(value)", bytes)
        case 3:
            bytes.removeLast(Int.random(in: 1...min(bytes.count, 64), using: &rng))
            return ("truncated to \(bytes.count)", bytes)
        default:
            bytes += (0..<Int.random(in: 1...16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            return ("extended to \(bytes.count)", bytes)
        }
    }

    @Test("seeded mutations of NGRU and NRRK: refused with a PackError, or the neural predictor stays finite")
    func fuzz() throws {
        let base = try PackSurgery.sections(of: PackFuzzTests.base)
        let good: [(tag: String, bytes: [UInt8])] = [
            ("NGRU", NeuralFixture.wordModelSection), ("NRRK", NeuralFixture.rerankerSection),
        ]
        let intact = try LanguagePack(data: Data(PackSurgery.assemble(base + good)))
        #expect(NeuralContextReranker(pack: intact) != nil, "the unmutated sections give the neural re-ranker")
        var accepted = 0
        var reasons = Set<String>()
        for round in 0..<Self.mutations {
            var rng = SplitMix64(seed: 0x4E_4752_55 &+ UInt64(round))
            let target = Int.random(in: 0...1, using: &rng)
            var sections = good
            var (name, bytes) = Self.mutate(sections[target].bytes, using: &rng)
            if target == 0, Bool.random(using: &rng) { bytes = Self.resealed(bytes) }
            sections[target].bytes = bytes
            let context = Comment(rawValue: "round \(round): \(sections[target].tag) \(name)")
            let pack: LanguagePack
            do {
                pack = try LanguagePack(data: Data(PackSurgery.assemble(base + sections)))
            } catch {
                guard case .malformed(let tag, let reason) = error else {
                    Issue.record("round \(round): \(name): not refused as a malformed section: \(error)")
                    continue
                }
                #expect(tag == sections[target].tag, context)
                reasons.insert(String(reason.prefix(24)))
                continue
            }
            accepted += 1
            let predictor = Predictor(pack: pack)
            for before in ["the c", "The cat sat ", "on the m"] {
                for suggestion in predictor.suggestions(before: before, count: 5) {
                    #expect(suggestion.score.isFinite, context)
                }
            }
        }
        // Both outcomes, and many distinct checks (not only the checksum) are reached.
        #expect(accepted > 0)
        #expect(accepted < Self.mutations)
        #expect(reasons.count >= 8, "\(reasons.sorted())")
    }

    @Test("a network whose output is not finite leaves the predictor's order")
    func nonFiniteNetworkOutput() throws {
        var network = try NeuralFixture.rerankerSection.withUnsafeBytes { raw throws(PackError) in
            try RerankerNetwork(section: raw)
        }
        network.layers[network.layers.count - 1].scales[0] = 3e38
        network.layers[network.layers.count - 1].biases[0] = 3e38
        let model = try WordLanguageModelTests.model()
        let reranker = try #require(NeuralContextReranker(network: network, model: model))
        var window = NeuralFixture.window.enumerated().map {
            RerankCandidate(key: $1, features: NeuralFixture.windowFeatures, score: Float($0))
        }
        reranker.rerank(&window, context: RerankContext(previousKeys: [], partialKey: "", startsSentence: true))
        #expect(window.map(\.score) == [0, 1, 2])
    }
}
