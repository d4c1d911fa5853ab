/// A word-level GRU language model (issue 17): the log-probability of the next word given every
/// word before it in the document, as one more input of the candidate re-ranker.
///
/// Architecture (PyTorch's `nn.GRU`, one layer, gates in r, z, n order): embedding `E` (vocabulary
/// × dimension) → GRU of the same dimension → logits `h · E[w] + outputBias[w]` (output weights
/// tied to the embedding). Id 0 is the document start `<s>`, id 1 the unknown word `<unk>`.
///
/// The model computes straight from its `NGRU` section's bytes (int8 matrices with one float
/// scale per row, see `init(section:)`): nothing is dequantised or copied at open, so a pack's
/// model costs its section's bytes and two small look-up tables. Each int8 row is read 32 columns
/// per SIMD load and its bytes are sign-extended and converted to floats exactly; the vector it
/// multiplies is laid out to match once per step (`Workspace.permuted`).
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

    /// The keys of punctuation between two words, for a model trained with them
    /// (`train_wordlm.py --punctuation`): a sentence end, a question, an exclamation, a comma,
    /// a colon or semicolon. The model then knows that a sentence or a clause ended, which the
    /// words alone do not tell (`evening. From`, `Well, I`).
    public static let sentenceEndKey = "<.>"
    public static let questionKey = "<?>"
    public static let exclamationKey = "<!>"
    public static let commaKey = "<,>"
    public static let colonKey = "<:>"

    /// The punctuation key of the text between two words (or after the last one), nil for none:
    /// the last sentence end (`.` and `…`, `?`, `!`), else a comma, else a colon or semicolon;
    /// spaces, quotes, brackets and dashes give none. `separator_token` in
    /// `scripts/neural/train_wordlm.py` is the same rule.
    public static func punctuationKey<S: StringProtocol>(between gap: S) -> String? {
        var comma = false
        var colon = false
        for scalar in gap.unicodeScalars.reversed() {
            switch scalar {
            case ".", "\u{2026}": return sentenceEndKey
            case "?": return questionKey
            case "!": return exclamationKey
            case ",": comma = true
            case ":", ";": colon = true
            default: continue
            }
        }
        return comma ? commaKey : colon ? colonKey : nil
    }

    /// Whether the model reads punctuation keys (its vocabulary has them): the predictor then
    /// gives them between the words of its context.
    public var readsPunctuation: Bool { id(of: Self.sentenceEndKey) != nil && id(of: Self.commaKey) != nil }

    /// The recurrent state after some words: the GRU's hidden vector and the log of the softmax
    /// normaliser of the next word's distribution (computed once per step, reused per candidate).
    public struct State: Sendable, Equatable {
        public var hidden: [Float]
        public var logNormalizer: Float
    }

    /// Number of dimensions of the embedding and the hidden state.
    public let dimension: Int
    /// The number of words in the vocabulary (with `<s>` and `<unk>`).
    public let vocabularySize: Int
    private let storage: SectionStorage
    private let layout: Layout
    /// Where each key starts in the key blob (section offsets; `vocabularySize + 1` entries).
    private let keyStarts: [UInt32]
    /// Open-addressing table of id + 1 (0: empty), by FNV-1a hash of the key's UTF-8 bytes.
    private let keyTable: [UInt32]

    /// Byte offsets of a section's parts (all multiples of 4), from its declared sizes.
    struct Layout: Sendable {
        var vocabulary: Int
        var dimension: Int
        var blobLength: Int
        var blob: Int { 20 }
        var embeddingScales: Int { blob + Self.padded(blobLength) }
        var embedding: Int { embeddingScales + 4 * vocabulary }
        var inputScales: Int { embedding + Self.padded(vocabulary * dimension) }
        var inputWeights: Int { inputScales + 4 * 3 * dimension }
        var hiddenScales: Int { inputWeights + Self.padded(3 * dimension * dimension) }
        var hiddenWeights: Int { hiddenScales + 4 * 3 * dimension }
        var inputBias: Int { hiddenWeights + Self.padded(3 * dimension * dimension) }
        var hiddenBias: Int { inputBias + 4 * 3 * dimension }
        var outputBias: Int { hiddenBias + 4 * 3 * dimension }
        var end: Int { outputBias + 4 * vocabulary }
        static func padded(_ count: Int) -> Int { (count + 3) / 4 * 4 }
    }

    /// The section bytes the model computes from, and whatever keeps them alive (the pack file,
    /// or a copy this storage owns).
    final class SectionStorage: @unchecked Sendable {
        let bytes: UnsafeRawBufferPointer
        private let owner: AnyObject?
        private let owned: UnsafeMutableRawBufferPointer?

        /// Borrows bytes that `owner` keeps alive and never changes (a `PackFile`'s section).
        init(borrowing bytes: UnsafeRawBufferPointer, owner: AnyObject) {
            self.bytes = bytes
            self.owner = owner
            owned = nil
        }

        /// Copies the bytes (16-byte aligned).
        init(copying bytes: UnsafeRawBufferPointer) {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
            if let base = bytes.baseAddress, let target = copy.baseAddress, bytes.count > 0 {
                target.copyMemory(from: base, byteCount: bytes.count)
            }
            owned = copy
            owner = nil
            self.bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(copy)[0..<bytes.count])
        }

        deinit { owned?.deallocate() }
    }

    /// Preallocated buffers for steps and normalisers: a tracker owns one, so typing allocates
    /// nothing. Not shared between threads.
    public final class Workspace {
        let dimension: Int
        let chunks: Int
        /// The vector a matrix multiplies, in `4 × chunks` SIMD8 lanes (see `permute`).
        let permuted: UnsafeMutablePointer<SIMD8<Float>>
        let input: UnsafeMutablePointer<Float>
        let gatesIn: UnsafeMutablePointer<Float>
        let gatesHidden: UnsafeMutablePointer<Float>
        /// Every word's logit for the last state passed to `normalise` (padded to 8 with −∞).
        let logits: UnsafeMutablePointer<Float>
        let paddedVocabulary: Int

        public init(for model: WordLanguageModel) {
            dimension = model.dimension
            chunks = (model.dimension + 31) / 32
            permuted = .allocate(capacity: 4 * chunks)
            permuted.initialize(repeating: .zero, count: 4 * chunks)
            input = .allocate(capacity: dimension)
            input.initialize(repeating: 0, count: dimension)
            gatesIn = .allocate(capacity: 3 * dimension)
            gatesIn.initialize(repeating: 0, count: 3 * dimension)
            gatesHidden = .allocate(capacity: 3 * dimension)
            gatesHidden.initialize(repeating: 0, count: 3 * dimension)
            paddedVocabulary = (model.vocabularySize + 7) / 8 * 8
            logits = .allocate(capacity: paddedVocabulary)
            logits.initialize(repeating: -.infinity, count: paddedVocabulary)
        }

        deinit {
            permuted.deallocate()
            input.deallocate()
            gatesIn.deallocate()
            gatesHidden.deallocate()
            logits.deallocate()
        }

        /// Lays `vector` out for `dot`: lane j of group b of chunk k holds element 32k + 4j + b
        /// (0 past the end), the column of byte b of lane j of a 32-byte load of a row.
        func permute(_ vector: UnsafePointer<Float>) {
            for chunk in 0..<chunks {
                for byte in 0..<4 {
                    var lanes = SIMD8<Float>()
                    for lane in 0..<8 {
                        let column = 32 * chunk + 4 * lane + byte
                        lanes[lane] = column < dimension ? vector[column] : 0
                    }
                    permuted[4 * chunk + byte] = lanes
                }
            }
        }
    }

    /// The id of a key; nil for a word outside the vocabulary.
    public func id(of key: String) -> Int? {
        var key = key
        return key.withUTF8 { lookUp($0) }
    }

    /// The id a key steps the GRU with (`<unk>` for a word outside the vocabulary).
    func id(stepping key: String) -> Int { id(of: key) ?? 1 }

    /// The vocabulary's keys, by id (built on each call: for tools and tests).
    public var keys: [String] { (0..<vocabularySize).map(key) }

    /// The key of word `id`.
    public func key(_ id: Int) -> String {
        String(decoding: keyBytes(id), as: UTF8.self)
    }

    private func keyBytes(_ id: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage.bytes[Int(keyStarts[id])..<(Int(keyStarts[id + 1]) - 1)])
    }

    private func lookUp(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        let mask = keyTable.count - 1
        var slot = Int(Self.hash(UnsafeRawBufferPointer(key))) & mask
        while true {
            let entry = keyTable[slot]
            if entry == 0 { return nil }
            let id = Int(entry) - 1
            if keyBytes(id).elementsEqual(key) { return id }
            slot = (slot + 1) & mask
        }
    }

    /// FNV-1a, 32 bits (the key table's hash; deterministic, unlike `Hasher`).
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }

    /// The state at the start of a document (after `<s>`).
    public var startState: State { state(hidden: startHidden) }

    /// The hidden vector at the start of a document (after `<s>`), without the normaliser.
    var startHidden: [Float] { step([Float](repeating: 0, count: dimension), id: 0) }

    /// The state after one more word (unknown keys step with `<unk>`).
    public func advance(_ state: State, key: String) -> State { advance(state, id: id(stepping: key)) }

    /// The state with this hidden vector: computes its softmax normaliser (the step's main cost,
    /// one pass over the output matrix), so a replay over several words pays it once, at the end.
    func state(hidden: [Float]) -> State {
        let workspace = Workspace(for: self)
        let logNormalizer = hidden.withUnsafeBufferPointer { buffer in
            guard let vector = buffer.baseAddress else { return Float(0) }  // never empty: the model's width
            return normalise(vector, workspace)
        }
        return State(hidden: hidden, logNormalizer: logNormalizer)
    }

    /// log P(key | the words of `state`), and whether the key is outside the vocabulary (then it
    /// is the probability of `<unk>`, as in training). Computes the key's logit afresh; a
    /// `NeuralContextTracker` reads it from the logits its normaliser pass kept.
    public func logProbability(of key: String, in state: State) -> (value: Float, isUnknown: Bool) {
        let id = id(of: key)
        let workspace = Workspace(for: self)
        let logit = state.hidden.withUnsafeBufferPointer { hidden in
            guard let vector = hidden.baseAddress else { return Float(0) }  // never empty: the model's width
            workspace.permute(vector)
            return self.logit(id ?? 1, workspace)
        }
        return (logit - state.logNormalizer, id == nil)
    }

    /// One GRU step: h' = (1 − z) ⊙ n + z ⊙ h with r = σ(W_ir x + b_ir + W_hr h + b_hr),
    /// z = σ(W_iz x + b_iz + W_hz h + b_hz), n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)).
    func advance(_ state: State, id: Int) -> State { self.state(hidden: step(state.hidden, id: id)) }

    /// The GRU's hidden vector after one more word (no normaliser).
    func step(_ hidden: [Float], id: Int) -> [Float] {
        var next = hidden
        let workspace = Workspace(for: self)
        next.withUnsafeMutableBufferPointer { buffer in
            guard let vector = buffer.baseAddress else { return }  // never empty: the model's width
            step(vector, id: id, workspace)
        }
        return next
    }

    /// One GRU step in place (`hidden` becomes the next hidden vector), with no allocation.
    func step(_ hidden: UnsafeMutablePointer<Float>, id: Int, _ workspace: Workspace) {
        let size = dimension
        let scale = float(at: layout.embeddingScales + 4 * id)
        let row = layout.embedding + id * size
        for column in 0..<size {
            workspace.input[column] = Float(Int8(bitPattern: storage.bytes[row + column])) * scale
        }
        workspace.permute(workspace.input)
        for gate in 0..<(3 * size) {
            workspace.gatesIn[gate] =
                dot(layout.inputWeights + gate * size, workspace) * float(at: layout.inputScales + 4 * gate)
                + float(at: layout.inputBias + 4 * gate)
        }
        workspace.permute(hidden)
        for gate in 0..<(3 * size) {
            workspace.gatesHidden[gate] =
                dot(layout.hiddenWeights + gate * size, workspace) * float(at: layout.hiddenScales + 4 * gate)
                + float(at: layout.hiddenBias + 4 * gate)
        }
        let gatesIn = workspace.gatesIn
        let gatesHidden = workspace.gatesHidden
        for index in 0..<size {
            let reset = Self.sigmoid(gatesIn[index] + gatesHidden[index])
            let update = Self.sigmoid(gatesIn[size + index] + gatesHidden[size + index])
            let candidate = RerankerNetwork.tanh(gatesIn[2 * size + index] + reset * gatesHidden[2 * size + index])
            hidden[index] = (1 - update) * candidate + update * hidden[index]
        }
    }

    /// Every word's logit for `hidden` into `workspace.logits`, and log Σ_w exp(logit w)
    /// (max-shifted, eight words at a time): the step's main cost, one pass over the embedding.
    func normalise(_ hidden: UnsafePointer<Float>, _ workspace: Workspace) -> Float {
        workspace.permute(hidden)
        let logits = workspace.logits
        for id in 0..<vocabularySize { logits[id] = logit(id, workspace) }
        let blocks = UnsafeRawPointer(logits)
        let blockCount = workspace.paddedVocabulary / 8
        var maxima = SIMD8<Float>(repeating: -.infinity)
        for block in 0..<blockCount {
            maxima = pointwiseMax(maxima, blocks.loadUnaligned(fromByteOffset: 32 * block, as: SIMD8<Float>.self))
        }
        let largest = maxima.max()
        var total = SIMD8<Float>()
        for block in 0..<blockCount {
            total += Self.exponential(
                blocks.loadUnaligned(fromByteOffset: 32 * block, as: SIMD8<Float>.self) - largest)
        }
        return largest + Float(Math.log(Double(total.sum())))
    }

    /// Word `id`'s logit for the hidden vector `workspace.permuted` holds (the same arithmetic,
    /// in the same order, whether one candidate asks or the normaliser pass computes them all).
    @inline(__always)
    func logit(_ id: Int, _ workspace: Workspace) -> Float {
        dot(layout.embedding + id * dimension, workspace) * float(at: layout.embeddingScales + 4 * id)
            + float(at: layout.outputBias + 4 * id)
    }

    /// The int8 row at `offset` times the vector in `workspace.permuted`: 32 columns per load.
    /// The last load of a row whose length is not a multiple of 32 reads up to 24 bytes past it
    /// (always inside the section: scales or biases follow every matrix), times zeros.
    @inline(__always)
    private func dot(_ offset: Int, _ workspace: Workspace) -> Float {
        // The section was validated non-empty at open; no base address would mean no model at all.
        guard let base = storage.bytes.baseAddress else { return 0 }
        let row = base + offset
        let vector = workspace.permuted
        var sums = (SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>())
        for chunk in 0..<workspace.chunks {
            // Byte b of each 32-bit lane, sign-extended by two shifts and converted exactly
            // (one instruction per four lanes: cvtdq2ps).
            let packed = row.loadUnaligned(fromByteOffset: 32 * chunk, as: SIMD8<Int32>.self)
            sums.0 += SIMD8<Float>((packed &<< 24) &>> 24) * vector[4 * chunk]
            sums.1 += SIMD8<Float>((packed &<< 16) &>> 24) * vector[4 * chunk + 1]
            sums.2 += SIMD8<Float>((packed &<< 8) &>> 24) * vector[4 * chunk + 2]
            sums.3 += SIMD8<Float>(packed &>> 24) * vector[4 * chunk + 3]
        }
        return ((sums.0 + sums.1) + (sums.2 + sums.3)).sum()
    }

    /// A little-endian f32 of the section.
    @inline(__always)
    private func float(at offset: Int) -> Float {
        Float(bitPattern: UInt32(littleEndian: storage.bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
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

    /// A model from its int8 form (encodes it as a section and reads that).
    public init(_ model: Quantized) {
        do {
            try self.init(section: model.encoded())
        } catch {
            preconditionFailure("word model shapes do not match: \(error)")
        }
    }

    /// Reads a section from a copy of `bytes` (checked as `init(section:owner:)` does).
    public init(section bytes: UnsafeRawBufferPointer) throws(PackError) {
        try self.init(storage: SectionStorage(copying: bytes))
    }

    init(section bytes: [UInt8]) throws(PackError) {
        let storage = bytes.withUnsafeBytes { SectionStorage(copying: $0) }
        try self.init(storage: storage)
    }

    /// Reads an `NGRU` section in place: `owner` keeps its bytes alive and unchanged (a
    /// `PackFile`). Checks the version, the sizes against the exact length, the checksum, that
    /// the keys are UTF-8, newline-ended, unique and start with `<s>`, `<unk>`, and that every
    /// float is finite (layout: `Quantized.encoded()`).
    init(section bytes: UnsafeRawBufferPointer, owner: AnyObject) throws(PackError) {
        try self.init(storage: SectionStorage(borrowing: bytes, owner: owner))
    }

    private init(storage: SectionStorage) throws(PackError) {
        let tag = Self.tag
        func malformed(_ reason: String) -> PackError { .malformed(tag: tag, reason: reason) }
        let bytes = storage.bytes
        var reader = SectionReader(bytes: bytes, tag: tag)
        let version = try reader.u32()
        guard version == Self.version else { throw malformed("version \(version), this build reads \(Self.version)") }
        let vocabulary = Int(try reader.u32())
        let dimension = Int(try reader.u32())
        let blobLength = Int(try reader.u32())
        let checksum = try reader.u32()
        guard (2...Self.maximumVocabulary).contains(vocabulary), (8...Self.maximumDimension).contains(dimension),
            dimension % 8 == 0
        else { throw malformed("vocabulary \(vocabulary), dimension \(dimension)") }
        guard blobLength <= bytes.count else {
            throw malformed("\(bytes.count) bytes, its key blob says \(blobLength)")
        }
        let layout = Layout(vocabulary: vocabulary, dimension: dimension, blobLength: blobLength)
        guard bytes.count == layout.end else { throw malformed("\(bytes.count) bytes, its sizes say \(layout.end)") }
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[20...])) == checksum else {
            throw malformed("checksum mismatch")
        }
        let blob = UnsafeRawBufferPointer(rebasing: bytes[layout.blob..<(layout.blob + blobLength)])
        guard String(validating: blob, as: UTF8.self) != nil else { throw malformed("keys are not UTF-8") }
        guard blob.last == 0x0A else { throw malformed("the key list is not newline-terminated") }
        // Key starts (section offsets) from the newlines; an empty key or a count that is not
        // the vocabulary's means the list does not match.
        var starts: [UInt32] = [UInt32(layout.blob)]
        starts.reserveCapacity(vocabulary + 1)
        for (index, byte) in blob.enumerated() where byte == 0x0A {
            guard starts.count <= vocabulary, layout.blob + index > Int(starts[starts.count - 1]) else {
                throw malformed("the key list does not match the vocabulary")
            }
            starts.append(UInt32(layout.blob + index + 1))
        }
        guard starts.count == vocabulary + 1 else { throw malformed("the key list does not match the vocabulary") }
        var capacity = 16
        while capacity < vocabulary + vocabulary / 2 { capacity *= 2 }
        var table = [UInt32](repeating: 0, count: capacity)
        for id in 0..<vocabulary {
            let key = UnsafeRawBufferPointer(rebasing: bytes[Int(starts[id])..<(Int(starts[id + 1]) - 1)])
            var slot = Int(Self.hash(key)) & (capacity - 1)
            while table[slot] != 0 {
                let other = Int(table[slot]) - 1
                if UnsafeRawBufferPointer(rebasing: bytes[Int(starts[other])..<(Int(starts[other + 1]) - 1)])
                    .elementsEqual(key)
                {
                    throw malformed("the key list does not match the vocabulary (a key appears twice)")
                }
                slot = (slot + 1) & (capacity - 1)
            }
            table[slot] = UInt32(id + 1)
        }
        let floatRanges = [
            (layout.embeddingScales, vocabulary), (layout.inputScales, 3 * dimension),
            (layout.hiddenScales, 3 * dimension), (layout.inputBias, 6 * dimension), (layout.outputBias, vocabulary),
        ]
        for (start, count) in floatRanges {
            for index in 0..<count {
                let value = Float(
                    bitPattern: UInt32(
                        littleEndian: bytes.loadUnaligned(fromByteOffset: start + 4 * index, as: UInt32.self)))
                guard value.isFinite, abs(value) <= 1e4 else { throw malformed("a weight is out of range") }
            }
        }
        self.storage = storage
        self.layout = layout
        self.dimension = dimension
        self.vocabularySize = vocabulary
        keyStarts = starts
        keyTable = table
        guard key(0) == Self.startKey, key(1) == Self.unknownKey else {
            throw malformed("the key list does not match the vocabulary")
        }
    }

    /// The int8 form of this model (what its section holds).
    public var quantized: Quantized {
        var reader = SectionReader(bytes: storage.bytes, tag: Self.tag)
        reader.offset = layout.embeddingScales
        let gates = 3 * dimension
        // The section was checked at open: these reads stay inside it.
        do {
            return Quantized(
                dimension: dimension, keys: keys,
                embeddingScales: try reader.floats(vocabularySize),
                embedding: try reader.int8s(vocabularySize * dimension),
                inputScales: try reader.floats(gates), inputWeights: try reader.int8s(gates * dimension),
                hiddenScales: try reader.floats(gates), hiddenWeights: try reader.int8s(gates * dimension),
                inputBias: try reader.floats(gates), hiddenBias: try reader.floats(gates),
                outputBias: try reader.floats(vocabularySize))
        } catch {
            preconditionFailure("a checked section cannot end early: \(error)")
        }
    }

    /// The int8 model of an `NGRU` section, validated.
    public static func quantized(section bytes: UnsafeRawBufferPointer) throws(PackError) -> Quantized {
        try WordLanguageModel(section: bytes).quantized
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
