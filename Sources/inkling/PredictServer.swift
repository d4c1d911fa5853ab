import FoundationEssentials
import InklingCommandLine
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Serves the typesim line protocol: one JSON request per line in, one reply per line out.
///
/// Input is read in bounded pieces: a line longer than `maximumLineBytes` is answered with an
/// error and its bytes are dropped as they arrive (never held), so a huge line cannot grow the
/// process. Every request line gets exactly one reply; one that cannot be answered gets
/// `{"id":N,"error":…}` (with `"id":null` when its id cannot be read) and the server goes on.
struct PredictServer {
    /// The longest request line answered (64 KiB; the predictor reads only the last 1,000
    /// characters of the text anyway).
    static let maximumLineBytes = 65536
    /// The most suggestions one request may ask for (`n`).
    static let counts = 1...50

    struct Request: Decodable {
        var id: Int
        var before: String?
        var n: Int?
        var reset: Bool?
        var commit: String?
        var context: String?
        /// Also reply with the re-ranker's view of the window (`window`: keys and features), for
        /// training and measuring re-rankers offline (issue 17).
        var features: Bool?
    }

    /// Only the id, to address the error reply to a request that cannot be read whole.
    struct RequestID: Decodable {
        var id: Int
    }

    struct Reply: Encodable {
        var id: Int?
        var words: [String]?
        var error: String?
        /// The candidate window in the final order: the key, then the features (`RerankFeature`).
        var window: [WindowRow]?

        enum CodingKeys: String, CodingKey { case id, words, error, window }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)  // null when unknown: still one reply per line
            try container.encodeIfPresent(words, forKey: .words)
            try container.encodeIfPresent(error, forKey: .error)
            try container.encodeIfPresent(window, forKey: .window)
        }
    }

    /// One window candidate: its key and features.
    struct WindowRow: Encodable {
        var key: String
        var features: [Float]
        var score: Float
    }

    /// Keeps the last window the predictor showed its re-ranker and passes it on unchanged
    /// (or through `inner`, the re-ranker in use).
    final class WindowRecorder: CandidateReranker {
        var inner: (any CandidateReranker)?
        var last: [RerankCandidate] = []
        func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) {
            inner?.rerank(&candidates, context: context)
            last = candidates
        }
        func likelyWords(after documentKeys: [String]) -> [Int] {
            inner?.likelyWords(after: documentKeys) ?? []
        }
    }

    let predictor: Predictor
    /// Whether commit events are learned from (`--learn`).
    var learns = false
    /// Where each suggestion request's time in the predictor goes, one line per request:
    /// nanoseconds and the predictor's answer path (`INKLING_PREDICT_TIMINGS`, for
    /// `bench/predictor_profile.py`); nil: not recorded. Never the text.
    var timings: UnsafeMutablePointer<FILE>? = nil

    func run() {
        var splitter = LineSplitter(limit: Self.maximumLineBytes)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            for item in splitter.feed(buffer[0..<count]) { handle(item) }
        }
        if let last = splitter.finish() { handle(last) }
    }

    func handle(_ item: LineSplitter.Item) {
        switch item {
        case .line(let bytes):
            if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return }
            send(answer(Data(bytes)))
        case .oversized(let length):
            send(Reply(id: nil, error: "the request line has \(length) bytes; the limit is \(Self.maximumLineBytes)"))
        }
    }

    /// The reply to one request line.
    func answer(_ line: Data) -> Reply {
        let request: Request
        do {
            request = try JSONDecoder().decode(Request.self, from: line)
        } catch {
            let id = try? JSONDecoder().decode(RequestID.self, from: line).id
            return Reply(
                id: id,
                error:
                    "the request is not a JSON object with an integer id and fields before (text), n (whole number), reset (true), commit and context (text)"
            )
        }
        var reply = Reply(id: request.id)
        if let before = request.before {
            let count = request.n ?? 3
            guard Self.counts.contains(count) else {
                reply.error =
                    "n must be a whole number from \(Self.counts.lowerBound) to \(Self.counts.upperBound), not \(count)"
                return reply
            }
            if request.features == true {
                let recorder = WindowRecorder()
                recorder.inner = predictor.reranker
                predictor.reranker = recorder
                reply.words = predictor.suggest(before: before, count: count)
                predictor.reranker = recorder.inner
                reply.window = recorder.last.sorted { ($0.score, $1.key) > ($1.score, $0.key) }
                    .map { WindowRow(key: $0.key, features: $0.features, score: $0.score) }
            } else if let timings {
                var start = timespec()
                var end = timespec()
                clock_gettime(CLOCK_MONOTONIC, &start)
                reply.words = predictor.suggest(before: before, count: count)
                clock_gettime(CLOCK_MONOTONIC, &end)
                let nanoseconds = (end.tv_sec - start.tv_sec) * 1_000_000_000 + (end.tv_nsec - start.tv_nsec)
                fputs("\(nanoseconds) \(predictor.lastAnswerPath.rawValue)\n", timings)
            } else {
                reply.words = predictor.suggest(before: before, count: count)
            }
        } else if request.reset == true {
            predictor.reset()
        } else if let commit = request.commit, learns {
            // A phrase is learned word by word, each after the words before it.
            var before = request.context ?? ""
            for word in WordText.words(in: commit) {
                predictor.learn(word: String(word), before: before, now: 0)
                before += (before.isEmpty ? "" : " ") + word
            }
        }
        return reply
    }

    func send(_ reply: Reply) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(reply) else { return }
        // One unbuffered write per reply: the harness waits for each line.
        Terminal.write(String(decoding: data, as: UTF8.self) + "\n", to: 1)
    }
}
