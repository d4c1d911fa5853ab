/// A word-level GRU language model (issue 17): the log-probability of the next word given every
/// word before it in the document, as one more input of the candidate re-ranker.
///
/// Architecture (PyTorch's `nn.GRU`, one layer, gates in r, z, n order): embedding `E` (vocabulary
/// × dimension) → GRU of the same dimension → logits `h · E[w] + outputBias[w]` (output weights
/// tied to the embedding). Id 0 is the document start `<s>`, id 1 the unknown word `<unk>`.
/// The pack stores the matrices as int8 with one float scale per row (`NGRU` section, see
/// `init(section:)`). The GRU's matrices are dequantised to floats once, at open; the embedding
/// (the output matrix too, vocabulary × dimension) stays int8 in memory and is dequantised on the
/// fly, four columns per 32-bit lane: a quarter of the memory, and of the bytes each step's softmax
/// normaliser reads.
public struct WordLanguageModel: Sendable {
    /// The section format version this build reads and writes.
    public static let version: UInt32 = 1
    /// Section tag in the pack.
    public static let tag = "NGRU"
    /// Bounds on what a pack may declare (bound the memory and the work of one step).
    static let maximumVocabulary = 1 << 18
    static let maximumDimension = 512
    /// The document-start and unknown-word keys, ids 0 and 1.
    public static let startKey = "<s>"
    public static let unknownKey = "<unk>"

    /// The recurrent state after some words: the GRU's hidden vector and the log of the softmax
    /// normaliser of the next word's distribution (computed once per step, reused per candidate).
    public struct State: Sendable, Equatable {
        public var hidden: [Float]
        public var logNormalizer: Float
    }

    /// Number of dimensions of the embedding and the hidden state.
    public let dimension: Int
    /// The vocabulary's keys, by id.
    public let keys: [String]
    private let idOfKey: [String: Int]
    /// The int8 embedding in blocks of 8 words, and inside a block in groups of 4 columns: lane
    /// w % 8 of group g of block w / 8 (element ((w / 8) · dimension / 4 + g) · 8 + w % 8) holds
    /// word w's columns 4g … 4g + 3, one per byte from the lowest, each stored as q + 128. So the
    /// normaliser computes 8 logits per multiply-add without horizontal sums (padding words are 0).
    private let embeddingBlocks: [UInt32]
    /// The embedding's row scales in the same blocks of 8 (0 for padding words).
    private let embeddingScaleBlocks: [SIMD8<Float>]
    /// The output bias in the same blocks of 8; −∞ for padding words (they add e^−∞ = 0).
    private let outputBiasBlocks: [SIMD8<Float>]
    private let inputWeights: [Float]  // 3·dimension × dimension
    private let hiddenWeights: [Float]  // 3·dimension × dimension
    private let inputBias: [Float]  // 3·dimension
    private let hiddenBias: [Float]  // 3·dimension

    /// The number of words in the vocabulary (with `<s>` and `<unk>`).
    public var vocabularySize: Int { keys.count }

    /// The id of a key; nil for a word outside the vocabulary.
    public func id(of key: String) -> Int? { idOfKey[key] }

    /// The state at the start of a document (after `<s>`).
    public var startState: State { state(hidden: startHidden) }

    /// The hidden vector at the start of a document (after `<s>`), without the normaliser.
    var startHidden: [Float] { step([Float](repeating: 0, count: dimension), id: 0) }

    /// The state after one more word (unknown keys step with `<unk>`).
    public func advance(_ state: State, key: String) -> State { advance(state, id: id(stepping: key)) }

    /// The id a key steps the GRU with (`<unk>` for a word outside the vocabulary).
    func id(stepping key: String) -> Int { idOfKey[key] ?? 1 }

    /// The state with this hidden vector: computes its softmax normaliser (the step's main cost,
    /// one pass over the output matrix), so a replay over several words pays it once, at the end.
    func state(hidden: [Float]) -> State { State(hidden: hidden, logNormalizer: logNormalizer(hidden: hidden)) }

    /// log P(key | the words of `state`), and whether the key is outside the vocabulary (then it
    /// is the probability of `<unk>`, as in training).
    public func logProbability(of key: String, in state: State) -> (value: Float, isUnknown: Bool) {
        let id = idOfKey[key]
        return (logit(id ?? 1, hidden: state.hidden) - state.logNormalizer, id == nil)
    }

    /// One GRU step: h' = (1 − z) ⊙ n + z ⊙ h with r = σ(W_ir x + b_ir + W_hr h + b_hr),
    /// z = σ(W_iz x + b_iz + W_hz h + b_hz), n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)).
    func advance(_ state: State, id: Int) -> State { self.state(hidden: step(state.hidden, id: id)) }

    /// The GRU's hidden vector after one more word (no normaliser).
    func step(_ hidden: [Float], id: Int) -> [Float] {
        let size = dimension
        var gatesIn = [Float](repeating: 0, count: 3 * size)
        var gatesHidden = [Float](repeating: 0, count: 3 * size)
        embeddingRow(id).withUnsafeBufferPointer { input in
            Self.multiply(
                inputWeights, UnsafeRawBufferPointer(input), rows: 3 * size, columns: size, bias: inputBias,
                into: &gatesIn)
        }
        hidden.withUnsafeBufferPointer { hidden in
            Self.multiply(
                hiddenWeights, UnsafeRawBufferPointer(hidden), rows: 3 * size, columns: size, bias: hiddenBias,
                into: &gatesHidden)
        }
        var next = [Float](repeating: 0, count: size)
        for index in 0..<size {
            let reset = Self.sigmoid(gatesIn[index] + gatesHidden[index])
            let update = Self.sigmoid(gatesIn[size + index] + gatesHidden[size + index])
            let candidate = RerankerNetwork.tanh(gatesIn[2 * size + index] + reset * gatesHidden[2 * size + index])
            next[index] = (1 - update) * candidate + update * hidden[index]
        }
        return next
    }

    /// log Σ_w exp(logit w), max-shifted: 8 words per block, four independent sums per block.
    private func logNormalizer(hidden: [Float]) -> Float {
        let blockCount = outputBiasBlocks.count
        var logits = [SIMD8<Float>](repeating: .zero, count: blockCount)
        var maxima = SIMD8<Float>(repeating: -.infinity)
        let size = dimension
        embeddingBlocks.withUnsafeBytes { base in
            hidden.withUnsafeBufferPointer { hidden in
                for block in 0..<blockCount {
                    let start = block * size * 8
                    var sums = (SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>())
                    var column = 0
                    while column < size {
                        let packed = base.loadUnaligned(fromByteOffset: start + column * 8, as: SIMD8<UInt32>.self)
                        sums.0 += Self.unpack(packed) * hidden[column]
                        sums.1 += Self.unpack(packed &>> 8) * hidden[column + 1]
                        sums.2 += Self.unpack(packed &>> 16) * hidden[column + 2]
                        sums.3 += Self.unpack(packed &>> 24) * hidden[column + 3]
                        column += 4
                    }
                    let block8 =
                        ((sums.0 + sums.1) + (sums.2 + sums.3)) * embeddingScaleBlocks[block] + outputBiasBlocks[block]
                    logits[block] = block8
                    maxima = pointwiseMax(maxima, block8)
                }
            }
        }
        let largest = maxima.max()
        var total = SIMD8<Float>()
        for block in logits { total += Self.exponential(block - largest) }
        return largest + Float(Math.log(Double(total.sum())))
    }

    /// The int8 values in the lowest byte of each lane (stored as q + 128), as floats, exactly:
    /// the byte u under the exponent of 2²³ is the float 2²³ + u (integer → float conversions of
    /// the generic SIMD types go lane by lane).
    @inline(__always)
    static func unpack(_ packed: SIMD8<UInt32>) -> SIMD8<Float> {
        unsafeBitCast((packed & 0xFF) | 0x4B00_0000, to: SIMD8<Float>.self) - 8_388_736
    }

    /// Word `id`'s int8 embedding values (without its scale), gathered from its block.
    private func quantizedRow(_ id: Int) -> [Float] {
        let start = (id / 8) * dimension * 2 + id % 8
        return (0..<dimension).map { column in
            let packed = embeddingBlocks[start + column / 4 * 8]
            return Float(Int((packed >> (8 * UInt32(column % 4))) & 0xFF) - 128)
        }
    }

    /// One word's embedding (dequantised).
    private func embeddingRow(_ id: Int) -> [Float] {
        let scale = embeddingScaleBlocks[id / 8][id % 8]
        return quantizedRow(id).map { $0 * scale }
    }

    /// e^x for x ≤ 0, eight lanes at once (relative error below 2e-6; 0 below −87): the
    /// softmax normaliser needs one per vocabulary word per step, too many for `Math.exp`.
    @inline(__always)
    static func exponential(_ x: SIMD8<Float>) -> SIMD8<Float> {
        let clamped = x.replacing(with: -87, where: x .< -87)
        // Rounding and the float → integer conversion by adding 1.5 · 2²³ (the integer lands in
        // the significand's low bits): the generic SIMD conversions go lane by lane through libm.
        let magic = SIMD8<Float>(repeating: 12_582_912)
        let shifted = clamped * 1.442_695_04 + magic
        let k = shifted - magic
        // ln 2 in two parts (Cody–Waite): k · high is exact, so r keeps its precision for large k.
        let r = (clamped - k * 0.693_145_751_953_125) - k * 1.428_606_765_330_187e-6
        // Taylor series of e^r on |r| ≤ ln 2 / 2, Horner form.
        var p = SIMD8<Float>(repeating: 1.0 / 5040)
        p = p * r + 1.0 / 720
        p = p * r + 1.0 / 120
        p = p * r + 1.0 / 24
        p = p * r + 1.0 / 6
        p = p * r + 0.5
        p = p * r + 1
        p = p * r + 1
        let integer = unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- 0x4B40_0000
        let powerOfTwo = unsafeBitCast((integer &+ 127) &<< 23, to: SIMD8<Float>.self)
        return (p * powerOfTwo).replacing(with: 0, where: x .< -87)
    }

    /// Word `id`'s logit (per candidate: reads its row in place, no allocation).
    private func logit(_ id: Int, hidden: [Float]) -> Float {
        let start = (id / 8) * dimension * 2 + id % 8
        var sum: Float = 0
        for group in 0..<(dimension / 4) {
            let packed = embeddingBlocks[start + group * 8]
            for byte in 0..<4 {
                let value = Float(Int((packed >> (8 * UInt32(byte))) & 0xFF) - 128)
                sum += value * hidden[group * 4 + byte]
            }
        }
        return sum * embeddingScaleBlocks[id / 8][id % 8] + outputBiasBlocks[id / 8][id % 8]
    }

    /// `out[row] = matrix[row] · vector + bias[row]` (row-major, `columns` a multiple of 8).
    private static func multiply(
        _ matrix: [Float], _ vector: UnsafeRawBufferPointer, rows: Int, columns: Int, bias: [Float],
        into out: inout [Float]
    ) {
        matrix.withUnsafeBytes { matrix in
            for row in 0..<rows { out[row] = dot(matrix, at: row * columns * 4, vector, count: columns) + bias[row] }
        }
    }

    /// Dot product of two float vectors whose length is a multiple of 8, eight lanes at a time.
    @inline(__always)
    private static func dot(
        _ left: UnsafeRawBufferPointer, at offset: Int, _ right: UnsafeRawBufferPointer, count: Int
    ) -> Float {
        var sum = SIMD8<Float>()
        var index = 0
        while index < count {
            let a = left.loadUnaligned(fromByteOffset: offset + index * 4, as: SIMD8<Float>.self)
            let b = right.loadUnaligned(fromByteOffset: index * 4, as: SIMD8<Float>.self)
            sum += a * b
            index += 8
        }
        return sum.sum()
    }

    static func sigmoid(_ x: Float) -> Float { 1 / (1 + Math.exp(-min(max(x, -40), 40))) }

    // MARK: - Pack section

    /// The int8 form of a model, as a pack stores it (what `encoded()` writes and `init(section:)` reads).
    public struct Quantized: Sendable, Equatable {
        public var dimension: Int
        public var keys: [String]
        public var embeddingScales: [Float]
        public var embedding: [Int8]
        public var inputScales: [Float]
        public var inputWeights: [Int8]
        public var hiddenScales: [Float]
        public var hiddenWeights: [Int8]
        public var inputBias: [Float]
        public var hiddenBias: [Float]
        public var outputBias: [Float]

        public init(
            dimension: Int, keys: [String], embeddingScales: [Float], embedding: [Int8], inputScales: [Float],
            inputWeights: [Int8], hiddenScales: [Float], hiddenWeights: [Int8], inputBias: [Float],
            hiddenBias: [Float], outputBias: [Float]
        ) {
            self.dimension = dimension
            self.keys = keys
            self.embeddingScales = embeddingScales
            self.embedding = embedding
            self.inputScales = inputScales
            self.inputWeights = inputWeights
            self.hiddenScales = hiddenScales
            self.hiddenWeights = hiddenWeights
            self.inputBias = inputBias
            self.hiddenBias = hiddenBias
            self.outputBias = outputBias
        }

        /// The `NGRU` section bytes.
        ///
        /// Layout (little endian): version, vocabulary size, dimension, key-blob length (u32 each);
        /// CRC-32 (IEEE, as zlib) of every byte after it; the keys in id order, UTF-8, each ended
        /// by a newline, padded with zeros to 4 bytes; then the embedding's row scales (f32) and
        /// int8 rows, the input-to-hidden and hidden-to-hidden matrices likewise (3·dimension rows
        /// each, gates r, z, n), their biases (f32), and the output bias (f32 per word).
        public func encoded() -> [UInt8] {
            var body: [UInt8] = []
            func put(_ values: [Float]) {
                for value in values {
                    withUnsafeBytes(of: value.bitPattern.littleEndian) { body.append(contentsOf: $0) }
                }
            }
            func put(_ values: [Int8]) {
                body.append(contentsOf: values.map { UInt8(bitPattern: $0) })
                while body.count % 4 != 0 { body.append(0) }
            }
            for key in keys { body.append(contentsOf: Array(key.utf8) + [0x0A]) }
            let blobLength = body.count
            while body.count % 4 != 0 { body.append(0) }
            put(embeddingScales)
            put(embedding)
            put(inputScales)
            put(inputWeights)
            put(hiddenScales)
            put(hiddenWeights)
            put(inputBias)
            put(hiddenBias)
            put(outputBias)
            var out: [UInt8] = []
            for value in [
                WordLanguageModel.version, UInt32(keys.count), UInt32(dimension), UInt32(blobLength),
                CRC32.checksum(body),
            ] {
                withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
            }
            return out + body
        }
    }

    /// Dequantises a model.
    public init(_ model: Quantized) {
        dimension = model.dimension
        keys = model.keys
        var ids: [String: Int] = [:]
        for (id, key) in model.keys.enumerated() { ids[key] = id }
        idOfKey = ids
        func dequantize(_ weights: [Int8], _ scales: [Float]) -> [Float] {
            precondition(weights.count == scales.count * model.dimension, "int8 rows do not match their scales")
            return weights.indices.map { Float(weights[$0]) * scales[$0 / model.dimension] }
        }
        let gates = 3 * model.dimension
        precondition(
            model.dimension % 8 == 0 && model.keys.count >= 2 && model.embeddingScales.count == model.keys.count
                && model.outputBias.count == model.keys.count && model.inputScales.count == gates
                && model.hiddenScales.count == gates && model.inputBias.count == gates
                && model.hiddenBias.count == gates, "word model shapes do not match")
        let size = model.dimension
        let blockCount = (model.keys.count + 7) / 8
        // Padding words: q = 0 (stored 128 in every byte), scale 0, bias −∞.
        var blocks = [UInt32](repeating: 0x8080_8080, count: blockCount * size * 2)
        var scales = [SIMD8<Float>](repeating: .zero, count: blockCount)
        var biases = [SIMD8<Float>](repeating: SIMD8(repeating: -.infinity), count: blockCount)
        for word in model.keys.indices {
            let start = (word / 8) * size * 2 + word % 8
            for group in 0..<(size / 4) {
                var packed: UInt32 = 0
                for byte in 0..<4 {
                    let value = Int(model.embedding[word * size + group * 4 + byte]) + 128
                    packed |= UInt32(value) << (8 * UInt32(byte))
                }
                blocks[start + group * 8] = packed
            }
            scales[word / 8][word % 8] = model.embeddingScales[word]
            biases[word / 8][word % 8] = model.outputBias[word]
        }
        embeddingBlocks = blocks
        embeddingScaleBlocks = scales
        outputBiasBlocks = biases
        inputWeights = dequantize(model.inputWeights, model.inputScales)
        hiddenWeights = dequantize(model.hiddenWeights, model.hiddenScales)
        inputBias = model.inputBias
        hiddenBias = model.hiddenBias
    }

    /// Reads and dequantises an `NGRU` section, checking its version, sizes, shapes, checksum,
    /// keys and that every float is finite (layout: `Quantized.encoded()`).
    public init(section bytes: UnsafeRawBufferPointer) throws(PackError) {
        self.init(try Self.quantized(section: bytes))
    }

    /// The int8 model of an `NGRU` section, validated.
    public static func quantized(section bytes: UnsafeRawBufferPointer) throws(PackError) -> Quantized {
        func malformed(_ reason: String) -> PackError { .malformed(tag: tag, reason: reason) }
        var reader = SectionReader(bytes: bytes, tag: tag)
        let version = try reader.u32()
        guard version == Self.version else { throw malformed("version \(version), this build reads \(Self.version)") }
        let vocabulary = Int(try reader.u32())
        let dimension = Int(try reader.u32())
        let blobLength = Int(try reader.u32())
        let checksum = try reader.u32()
        guard (2...maximumVocabulary).contains(vocabulary), (8...maximumDimension).contains(dimension),
            dimension % 8 == 0
        else { throw malformed("vocabulary \(vocabulary), dimension \(dimension)") }
        let gates = 3 * dimension
        let padded = { (count: Int) in (count + 3) / 4 * 4 }
        let expected =
            20 + padded(blobLength) + 4 * vocabulary + padded(vocabulary * dimension)
            + 2 * (4 * gates + padded(gates * dimension)) + 2 * 4 * gates + 4 * vocabulary
        guard blobLength <= bytes.count, bytes.count == expected else {
            throw malformed("\(bytes.count) bytes, its sizes say \(expected)")
        }
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[20...])) == checksum else {
            throw malformed("checksum mismatch")
        }
        let blobStart = try reader.take(padded(blobLength))
        guard
            let blob = String(
                validating: UnsafeRawBufferPointer(rebasing: bytes[blobStart..<(blobStart + blobLength)]), as: UTF8.self
            )
        else { throw malformed("keys are not UTF-8") }
        guard blob.hasSuffix("\n") else { throw malformed("the key list is not newline-terminated") }
        let keys = blob.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard keys.count == vocabulary, keys[0] == startKey, keys[1] == unknownKey, !keys.contains(""),
            Set(keys).count == keys.count
        else { throw malformed("the key list does not match the vocabulary") }
        let model = Quantized(
            dimension: dimension, keys: keys,
            embeddingScales: try reader.floats(vocabulary), embedding: try reader.int8s(vocabulary * dimension),
            inputScales: try reader.floats(gates), inputWeights: try reader.int8s(gates * dimension),
            hiddenScales: try reader.floats(gates), hiddenWeights: try reader.int8s(gates * dimension),
            inputBias: try reader.floats(gates), hiddenBias: try reader.floats(gates),
            outputBias: try reader.floats(vocabulary))
        let floats = [
            model.embeddingScales, model.inputScales, model.hiddenScales, model.inputBias, model.hiddenBias,
            model.outputBias,
        ]
        for values in floats {
            for value in values where !value.isFinite || abs(value) > 1e4 {
                throw malformed("a weight is out of range")
            }
        }
        return model
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib's `crc32`): the checksum of a pack's `NGRU` section.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { byte in
        var value = UInt32(byte)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { checksum($0) } }
}
