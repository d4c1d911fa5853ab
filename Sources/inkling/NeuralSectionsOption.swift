import FoundationEssentials
import InklingCore

/// `pack build --word-model FILE --reranker-network FILE`: the trained neural re-ranker's
/// sections (from `scripts/neural/export_sections.py`), checked before they go into the pack.
enum NeuralSectionsOption {
    static func read(_ arguments: Arguments) -> [(tag: String, bytes: [UInt8])] {
        let wordModelPath = arguments.options["--word-model"]
        let networkPath = arguments.options["--reranker-network"]
        guard wordModelPath != nil || networkPath != nil else { return [] }
        guard let wordModelPath, let networkPath else {
            arguments.usageError(tr("--word-model and --reranker-network go together"))
        }
        let wordModel = FileAccess.contents(wordModelPath)
        let network = FileAccess.contents(networkPath)
        if let problem = NeuralContextReranker.problem(wordModel: wordModel, network: network) {
            fail(tr("cannot use the neural re-ranker sections: {problem}", ["problem": problem]))
        }
        return [(WordLanguageModel.tag, wordModel), ("NRRK", network)]
    }
}
