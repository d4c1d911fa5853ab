/// A small dense network that scores one window candidate from its `RerankFeature`s (issue 17).
///
/// Layers: tanh after every layer but the last, which has one output; inputs are normalised with
/// the training set's mean and scale first. Weights are int8 with one float scale per row, as
/// stored in a pack's `NRRK` section (see `init(section:)` for the layout).
public struct RerankerNetwork: Sendable, Equatable {
    /// One dense layer: `rows` outputs of `columns` inputs.
    public struct Layer: Sendable, Equatable {
        public var rows: Int
        public var columns: Int
        /// Per-row dequantisation scale: weight = scale[row] × int8.
        public var scales: [Float]
        public var biases: [Float]
        /// Row-major int8 weights (`rows` × `columns`).
        public var weights: [Int8]

        public init(rows: Int, columns: Int, scales: [Float], biases: [Float], weights: [Int8]) {
            self.rows = rows
            self.columns = columns
            self.scales = scales
            self.biases = biases
            self.weights = weights
        }
    }

    /// The section format version this build reads and writes.
    public static let version: UInt32 = 1
    /// The most layers and the widest layer a pack may declare (bounds the work per candidate).
    static let maximumLayers = 8
    static let maximumWidth = 256

    /// Subtracted from each input before scaling.
    public var mean: [Float]
    /// Multiplied with each centred input (1 / standard deviation).
    public var inverseScale: [Float]
    public var layers: [Layer]

    /// The number of inputs.
    public var inputCount: Int { mean.count }

    public init(mean: [Float], inverseScale: [Float], layers: [Layer]) {
        self.mean = mean
        self.inverseScale = inverseScale
        self.layers = layers
    }

    /// The network's output for one candidate's features (allocates its buffers: for tests and
    /// tools; a re-ranker keeps an `Evaluator`).
    public func score(_ features: [Float]) -> Float {
        precondition(features.count == inputCount, "feature count does not match the network")
        let evaluator = Evaluator(self)
        return features.withUnsafeBufferPointer { evaluator.score($0) }
    }

    /// Runs a network with preallocated, zero-padded buffers: no allocation per candidate, and
    /// SIMD8 dot products (the int8 weights as exact floats, rows padded to 8 with zeros).
    public final class Evaluator {
        private struct CompiledLayer {
            var rows: Int
            /// Columns rounded up to 8.
            var stride: Int
            var scales: [Float]
            var biases: [Float]
            /// `rows × stride` int8 values as floats, zeros past `columns`.
            var weights: UnsafeMutablePointer<Float>
            /// This layer's output, `rows` rounded up to 8 (the padding stays 0).
            var output: UnsafeMutablePointer<Float>
            var isLast: Bool
        }
        private let mean: [Float]
        private let inverseScale: [Float]
        /// The normalised inputs, padded with zeros to 8.
        private let input: UnsafeMutablePointer<Float>
        private let inputStride: Int
        private let layers: [CompiledLayer]

        /// The number of inputs `score` reads.
        public var inputCount: Int { mean.count }

        public init(_ network: RerankerNetwork) {
            mean = network.mean
            inverseScale = network.inverseScale
            inputStride = Self.padded(network.inputCount)
            input = .allocate(capacity: inputStride)
            input.initialize(repeating: 0, count: inputStride)
            var compiled: [CompiledLayer] = []
            var columns = network.inputCount
            for (number, layer) in network.layers.enumerated() {
                precondition(
                    layer.columns == columns && layer.weights.count == layer.rows * layer.columns
                        && layer.scales.count == layer.rows && layer.biases.count == layer.rows,
                    "layer shapes do not chain")
                let stride = Self.padded(layer.columns)
                let weights = UnsafeMutablePointer<Float>.allocate(capacity: layer.rows * stride)
                weights.initialize(repeating: 0, count: layer.rows * stride)
                for row in 0..<layer.rows {
                    for column in 0..<layer.columns {
                        weights[row * stride + column] = Float(layer.weights[row * layer.columns + column])
                    }
                }
                let output = UnsafeMutablePointer<Float>.allocate(capacity: Self.padded(layer.rows))
                output.initialize(repeating: 0, count: Self.padded(layer.rows))
                compiled.append(
                    CompiledLayer(
                        rows: layer.rows, stride: stride, scales: layer.scales, biases: layer.biases, weights: weights,
                        output: output, isLast: number == network.layers.count - 1))
                columns = layer.rows
            }
            layers = compiled
        }

        deinit {
            input.deallocate()
            for layer in layers {
                layer.weights.deallocate()
                layer.output.deallocate()
            }
        }

        private static func padded(_ count: Int) -> Int { (count + 7) / 8 * 8 }

        /// The network's output for `inputCount` inputs (the last two may come separately, as
        /// `extra`: the re-ranker's GRU inputs after the predictor's features).
        public func score(_ features: UnsafeBufferPointer<Float>, extra: (Float, Float)? = nil) -> Float {
            let given = features.count + (extra == nil ? 0 : 2)
            precondition(given == mean.count, "feature count does not match the network")
            for index in 0..<features.count { input[index] = (features[index] - mean[index]) * inverseScale[index] }
            if let (first, second) = extra {
                let index = features.count
                input[index] = (first - mean[index]) * inverseScale[index]
                input[index + 1] = (second - mean[index + 1]) * inverseScale[index + 1]
            }
            var activations = UnsafePointer(input)
            for layer in layers {
                for row in 0..<layer.rows {
                    var sum = SIMD8<Float>()
                    let weights = UnsafeRawPointer(layer.weights + row * layer.stride)
                    let values = UnsafeRawPointer(activations)
                    var column = 0
                    while column < layer.stride {
                        sum +=
                            weights.loadUnaligned(fromByteOffset: 4 * column, as: SIMD8<Float>.self)
                            * values.loadUnaligned(fromByteOffset: 4 * column, as: SIMD8<Float>.self)
                        column += 8
                    }
                    layer.output[row] = sum.sum() * layer.scales[row] + layer.biases[row]
                }
                if !layer.isLast { RerankerNetwork.applyTanh(layer.output, count: Self.padded(layer.rows)) }
                activations = UnsafePointer(layer.output)
            }
            return activations[0]
        }
    }

    /// tanh of `count` values (a multiple of 8) in place, eight at a time (the hidden layers' activation).
    static func applyTanh(_ values: UnsafeMutablePointer<Float>, count: Int) {
        let raw = UnsafeMutableRawPointer(values)
        var start = 0
        while start < count {
            let chunk = raw.loadUnaligned(fromByteOffset: 4 * start, as: SIMD8<Float>.self)
            let magnitude = chunk.replacing(with: -chunk, where: chunk .< 0).replacing(with: 20, where: chunk .> 20)
                .replacing(with: 20, where: chunk .< -20)
            let small = WordLanguageModel.exponential(-2 * magnitude)
            let result = (1 - small) / (1 + small)
            raw.storeBytes(
                of: result.replacing(with: -result, where: chunk .< 0), toByteOffset: 4 * start, as: SIMD8<Float>.self)
            start += 8
        }
    }

    /// tanh from the vectorised exponential of e^(−2|x|) ≤ 1 (no C library here; `Math.exp` is
    /// too slow per hidden unit per candidate); saturates cleanly at ±1 for large inputs.
    static func tanh(_ x: Float) -> Float {
        let small = WordLanguageModel.exponential(SIMD8(repeating: -2 * min(abs(x), 20)))[0]
        let magnitude = (1 - small) / (1 + small)
        return x < 0 ? -magnitude : magnitude
    }

    /// Reads an `NRRK` section, checking every size and shape.
    ///
    /// Layout (little endian): version (u32), input count (u32), layer count (u32), rows and
    /// columns per layer (u32 each); the inputs' mean and inverse scale (f32 each); per layer the
    /// row scales (f32), biases (f32) and row-major int8 weights, padded with zeros to 4 bytes.
    /// The first layer takes the inputs, each next one the previous one's rows, the last has one row.
    public init(section bytes: UnsafeRawBufferPointer) throws(PackError) {
        var reader = SectionReader(bytes: bytes, tag: "NRRK")
        let version = try reader.u32()
        guard version == Self.version else {
            throw .malformed(tag: "NRRK", reason: "version \(version), this build reads \(Self.version)")
        }
        let inputs = Int(try reader.u32())
        let layerCount = Int(try reader.u32())
        guard (1...Self.maximumWidth).contains(inputs), (1...Self.maximumLayers).contains(layerCount) else {
            throw .malformed(tag: "NRRK", reason: "\(inputs) inputs, \(layerCount) layers")
        }
        var shapes: [(rows: Int, columns: Int)] = []
        var expectedColumns = inputs
        for index in 0..<layerCount {
            let rows = Int(try reader.u32())
            let columns = Int(try reader.u32())
            guard columns == expectedColumns, (1...Self.maximumWidth).contains(rows),
                index < layerCount - 1 || rows == 1
            else {
                throw .malformed(tag: "NRRK", reason: "layer \(index) is \(rows)×\(columns)")
            }
            shapes.append((rows, columns))
            expectedColumns = rows
        }
        mean = try reader.floats(inputs)
        inverseScale = try reader.floats(inputs)
        layers = []
        for shape in shapes {
            let scales = try reader.floats(shape.rows)
            let biases = try reader.floats(shape.rows)
            let weights = try reader.int8s(shape.rows * shape.columns)
            layers.append(
                Layer(rows: shape.rows, columns: shape.columns, scales: scales, biases: biases, weights: weights))
        }
        guard reader.offset == bytes.count else {
            throw .malformed(tag: "NRRK", reason: "\(bytes.count - reader.offset) bytes after the last layer")
        }
        for value in mean + inverseScale + layers.flatMap({ $0.scales + $0.biases }) where !value.isFinite {
            throw .malformed(tag: "NRRK", reason: "a weight is not a finite number")
        }
    }

    /// The `NRRK` section bytes (the layout `init(section:)` reads).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        func put(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func put(_ values: [Float]) { for value in values { put(value.bitPattern) } }
        put(Self.version)
        put(UInt32(inputCount))
        put(UInt32(layers.count))
        for layer in layers {
            put(UInt32(layer.rows))
            put(UInt32(layer.columns))
        }
        put(mean)
        put(inverseScale)
        for layer in layers {
            put(layer.scales)
            put(layer.biases)
            out.append(contentsOf: layer.weights.map { UInt8(bitPattern: $0) })
            while out.count % 4 != 0 { out.append(0) }
        }
        return out
    }
}

/// Re-ranks the window with a `RerankerNetwork`: the predictor's score plus the network's output.
public final class NetworkReranker: CandidateReranker {
    /// The network (its input count is `RerankFeature.count`).
    public let network: RerankerNetwork
    private let evaluator: RerankerNetwork.Evaluator

    /// Nil when the network does not read exactly the predictor's features.
    public init?(network: RerankerNetwork) {
        guard network.inputCount == RerankFeature.count else { return nil }
        self.network = network
        evaluator = RerankerNetwork.Evaluator(network)
    }

    public func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) {
        for index in candidates.indices {
            let output = candidates[index].features.withUnsafeBufferPointer { evaluator.score($0) }
            // A network that overflows (weights a pack may hold) leaves the predictor's order.
            if output.isFinite { candidates[index].score += output }
        }
    }
}
