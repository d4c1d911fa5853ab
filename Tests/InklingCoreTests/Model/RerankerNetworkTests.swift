import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// The re-ranker network's arithmetic and its pack section (issue 17).
@Suite("RerankerNetwork")
struct RerankerNetworkTests {
    /// 1 input → tanh(x) → 2·tanh(x) + 0.5, with int8 weights 127 and per-row scales.
    static let tiny = RerankerNetwork(
        mean: [0], inverseScale: [1],
        layers: [
            .init(rows: 1, columns: 1, scales: [1.0 / 127], biases: [0], weights: [127]),
            .init(rows: 1, columns: 1, scales: [2.0 / 127], biases: [0.5], weights: [127]),
        ])

    /// 15 inputs → 4 → 1, deterministic pseudo-random weights (covers padding and row order).
    static var wide: RerankerNetwork {
        var state: UInt32 = 17
        func next() -> Int8 {
            state = state &* 1_103_515_245 &+ 12345
            return Int8(truncatingIfNeeded: Int(state >> 16) % 255 - 127)
        }
        let inputs = RerankFeature.count
        return RerankerNetwork(
            mean: (0..<inputs).map { Float($0) / 10 }, inverseScale: (0..<inputs).map { 1 / Float($0 + 1) },
            layers: [
                .init(
                    rows: 4, columns: inputs, scales: [0.01, 0.02, 0.03, 0.04], biases: [0.1, -0.1, 0.2, 0],
                    weights: (0..<(4 * inputs)).map { _ in next() }),
                .init(rows: 1, columns: 4, scales: [0.05], biases: [-0.3], weights: (0..<4).map { _ in next() }),
            ])
    }

    @Test("scores: tanh hidden layer, linear output, normalised input")
    func arithmetic() {
        #expect(abs(Self.tiny.score([0]) - 0.5) < 1e-6)
        #expect(abs(Self.tiny.score([0.549_306_1]) - 1.5) < 1e-4)  // tanh(atanh 0.5) = 0.5
        #expect(abs(Self.tiny.score([50]) - 2.5) < 1e-5)  // saturates, no overflow
        #expect(abs(Self.tiny.score([-50]) - -1.5) < 1e-5)
        var shifted = Self.tiny
        shifted.mean = [1]
        shifted.inverseScale = [0.5]
        #expect(abs(shifted.score([2.098_612_2]) - 1.5) < 1e-4)  // (2.0986 − 1) × 0.5 = atanh 0.5
    }

    @Test("the section round-trips exactly")
    func roundTrip() throws {
        for network in [Self.tiny, Self.wide] {
            let bytes = network.encoded()
            #expect(bytes.count % 4 == 0)
            let decoded = try bytes.withUnsafeBytes { raw throws(PackError) in try RerankerNetwork(section: raw) }
            #expect(decoded == network)
        }
    }

    static func decodeError(_ bytes: [UInt8]) -> PackError? {
        do {
            _ = try bytes.withUnsafeBytes { raw throws(PackError) in try RerankerNetwork(section: raw) }
            return nil
        } catch let error as PackError {
            return error
        } catch {
            return .malformed(tag: "not a PackError", reason: "\(error)")
        }
    }

    static func put(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) {
            for (index, byte) in $0.enumerated() { bytes[offset + index] = byte }
        }
    }

    @Test("a damaged section is refused: truncation, trailing bytes, version, shapes, non-finite weights")
    func damagedSections() {
        let good = Self.wide.encoded()
        for length in [0, 3, 11, 20, good.count / 2, good.count - 1] {
            #expect(Self.decodeError(Array(good.prefix(length))) != nil, "truncated to \(length)")
        }
        #expect(Self.decodeError(good + [0, 0, 0, 0]) != nil)
        var edits: [(String, (inout [UInt8]) -> Void)] = [
            ("version 2", { Self.put(2, at: 0, in: &$0) }),
            ("no inputs", { Self.put(0, at: 4, in: &$0) }),
            ("huge input count", { Self.put(1 << 30, at: 4, in: &$0) }),
            ("no layers", { Self.put(0, at: 8, in: &$0) }),
            ("first layer's columns differ from the inputs", { Self.put(14, at: 16, in: &$0) }),
            ("second layer's columns differ from the first's rows", { Self.put(3, at: 24, in: &$0) }),
            ("last layer has two outputs", { Self.put(2, at: 20, in: &$0) }),
        ]
        edits.append(("NaN mean", { Self.put(Float.nan.bitPattern, at: 28, in: &$0) }))
        edits.append(("infinite scale", { Self.put(Float.infinity.bitPattern, at: 28 + 15 * 4, in: &$0) }))
        for (name, edit) in edits {
            var bytes = good
            edit(&bytes)
            guard case .malformed(let tag, _) = Self.decodeError(bytes) else {
                Issue.record("\(name): not refused as malformed")
                continue
            }
            #expect(tag == "NRRK", "\(name)")
        }
    }

    @Test("a pack with the section exposes the network; without it the pack still opens; a bad one fails to open")
    func packSection() throws {
        let base = FixturePacks.englishBytes
        #expect(try LanguagePack(data: Data(base)).rerankerNetwork == nil)
        let sections = try PackSurgery.sections(of: base)
        let withNetwork = PackSurgery.assemble(sections + [("NRRK", Self.wide.encoded())])
        #expect(try LanguagePack(data: Data(withNetwork)).rerankerNetwork == Self.wide)
        var broken = Self.wide.encoded()
        Self.put(3, at: 0, in: &broken)
        let withBroken = PackSurgery.assemble(sections + [("NRRK", broken)])
        #expect(throws: PackError.self) { try LanguagePack(data: Data(withBroken)) }
    }

    @Test("the network reranker adds its output to the predictor's score, and only reads the predictor's features")
    func networkReranker() throws {
        #expect(NetworkReranker(network: Self.tiny) == nil)
        let reranker = try #require(NetworkReranker(network: Self.wide))
        let features = (0..<RerankFeature.count).map { Float($0) * 0.3 - 1 }
        var window = [RerankCandidate(key: "the", features: features, score: -2)]
        reranker.rerank(&window, context: RerankContext(previousKeys: [], partialKey: "", startsSentence: true))
        #expect(abs(window[0].score - (-2 + Self.wide.score(features))) < 1e-6)
        let predictor = Predictor(pack: FixturePacks.english)
        predictor.reranker = reranker
        #expect(!predictor.suggest(before: "I think th", count: 3).isEmpty)
    }
}
