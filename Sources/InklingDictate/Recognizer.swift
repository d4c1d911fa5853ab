import CPocketSphinx

/// What a recogniser reports after a block of audio.
struct RecognizerStep: Equatable {
    /// The volatile hypothesis of the utterance in progress ("" when none).
    var partial: String
    /// An utterance that just ended (end of speech detected), if any.
    var final: String?
}

/// A speech recogniser fed 16 kHz mono signed 16-bit audio. The helper's only contact with a
/// recogniser, so a stronger one (whisper.cpp, Vosk) is one more conforming type.
protocol SpeechRecognizer: AnyObject {
    /// Starts a new listening period (forgets any utterance in progress).
    func begin() -> Bool
    /// Feeds one block of samples.
    func feed(_ samples: UnsafeBufferPointer<Int16>) -> RecognizerStep
    /// Ends the listening period: the last utterance's text, or nil when nothing was said.
    func finish() -> String?
    /// Ends the listening period and forgets what was heard.
    func discard()
}

/// PocketSphinx (the Debian `pocketsphinx-en-us` model by default), with its own voice-activity
/// detection deciding where an utterance ends. Logging is off (`inkling_ps_new`).
final class PocketSphinxRecognizer: SpeechRecognizer {
    private let decoder: OpaquePointer
    private var inUtterance = false
    private var wasInSpeech = false

    init?(model: RecognizerModel) {
        guard let decoder = inkling_ps_new(model.acousticModel, model.dictionary, model.languageModel) else {
            return nil
        }
        self.decoder = decoder
    }

    deinit { ps_free(decoder) }

    func begin() -> Bool {
        if inUtterance { ps_end_utt(decoder) }
        inUtterance = ps_start_utt(decoder) == 0
        wasInSpeech = false
        return inUtterance
    }

    func feed(_ samples: UnsafeBufferPointer<Int16>) -> RecognizerStep {
        guard inUtterance, let base = samples.baseAddress else { return RecognizerStep(partial: "") }
        ps_process_raw(decoder, base, samples.count, 0, 0)
        let inSpeech = ps_get_in_speech(decoder) != 0
        defer { wasInSpeech = inSpeech }
        if wasInSpeech && !inSpeech {
            // End of speech: this utterance is done, the next starts at once.
            let text = endUtterance()
            inUtterance = ps_start_utt(decoder) == 0
            return RecognizerStep(partial: "", final: text)
        }
        return RecognizerStep(partial: inSpeech ? hypothesis() : "")
    }

    func finish() -> String? {
        guard inUtterance else { return nil }
        inUtterance = false
        return endUtterance()
    }

    func discard() {
        if inUtterance { ps_end_utt(decoder) }
        inUtterance = false
    }

    private func endUtterance() -> String? {
        ps_end_utt(decoder)
        let text = hypothesis()
        return text.isEmpty ? nil : text
    }

    private func hypothesis() -> String {
        var score: Int32 = 0
        guard let raw = ps_get_hyp(decoder, &score) else { return "" }
        return String(cString: raw)
    }
}

/// The files of a PocketSphinx model.
struct RecognizerModel: Equatable, Sendable {
    var acousticModel: String
    var dictionary: String
    var languageModel: String

    /// Debian's `pocketsphinx-en-us`.
    static let debianEnglish = RecognizerModel(
        acousticModel: "/usr/share/pocketsphinx/model/en-us/en-us",
        dictionary: "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
        languageModel: "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin")
}
