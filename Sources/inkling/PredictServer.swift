import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Serves the typesim line protocol: one JSON request per line in, one reply per line out.
struct PredictServer {
    struct Request: Decodable {
        var id: Int
        var before: String?
        var n: Int?
        var reset: Bool?
        var commit: String?
        var context: String?
    }

    struct Reply: Encodable {
        var id: Int
        var words: [String]?
    }

    let predictor: Predictor
    /// Whether commit events are learned from (`--learn`).
    var learns = false

    func run() {
        let decoder = JSONDecoder()
        let encoder = JSONEncoder()
        while let line = readLine(strippingNewline: true) {
            if line.isEmpty { continue }
            let request: Request
            do {
                request = try decoder.decode(Request.self, from: Data(line.utf8))
            } catch {
                warn("inkling predict: ignoring a malformed request line")
                continue
            }
            var reply = Reply(id: request.id)
            if let before = request.before {
                reply.words = predictor.suggest(before: before, count: request.n ?? 3)
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
            guard let data = try? encoder.encode(reply) else { continue }
            var text = String(decoding: data, as: UTF8.self)
            text.append("\n")
            // One unbuffered write per reply: the harness waits for each line.
            text.withUTF8 { buffer in _ = write(1, buffer.baseAddress, buffer.count) }
        }
    }
}
