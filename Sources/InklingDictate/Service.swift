import Dispatch
import Glibc
import InklingCommandLine
import InklingCore
import Synchronization

/// Events go to stdout as whole lines, one writer at a time.
typealias Output = LineOutput

extension LineOutput {
    func send(_ event: DictationEvent) { send(line: event.line) }
}

/// What the listening thread is asked to do next.
enum ListenCommand: Equatable, Sendable {
    case listen
    case stop
    case cancel
}

/// The helper between the pipe and the recogniser. The main thread reads stdin and calls
/// `handle(line:)`; one listening thread at a time records, feeds the recogniser and sends events.
/// Nothing heard or recognised is logged or written anywhere but to the engine's pipe.
final class Service: @unchecked Sendable {
    struct State {
        var session: Int?
        var command = ListenCommand.stop
        var listening = false
        var ignoredLines = 0
    }

    /// Samples per block: 100 ms, so levels and partials stay live and `stop` is quick.
    static let blockSamples = 1600

    let options: Options
    let output: Output
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "inkling-dictate.listen")
    /// Made on the listening thread when first needed (loading a model takes a moment), kept.
    private var recognizer: (any SpeechRecognizer)?

    init(options: Options, output: Output) {
        self.options = options
        self.output = output
    }

    enum LineEffect: Equatable {
        case handled
        case shutdown
    }

    /// Handles one input line (without its newline).
    func handle(line: [UInt8]) -> LineEffect {
        guard let request = DictationRequest.parse(String(decoding: line, as: UTF8.self)) else {
            ignore(bytes: line.count)
            return .handled
        }
        switch request.type {
        case "shutdown":
            return .shutdown
        case "start":
            guard let session = request.session else { return .handled }
            let launch = state.withLock { state -> Bool in
                state.session = session
                state.command = .listen
                if state.listening { return false }
                state.listening = true
                return true
            }
            if launch { queue.async { self.listen() } }
        case "stop", "cancel":
            state.withLock { state in
                guard request.session == nil || request.session == state.session else { return }
                if state.command == .listen { state.command = request.type == "stop" ? .stop : .cancel }
            }
        default:
            break
        }
        return .handled
    }

    func ignore(bytes: Int) {
        let count = state.withLock { state in
            state.ignoredLines += 1
            return state.ignoredLines
        }
        if count <= 10 || count % 100 == 0 { Log.note("ignored an input line", ("count", count), ("bytes", bytes)) }
    }

    private func currentSession() -> Int? { state.withLock { $0.session } }

    /// The listening thread: one listening period (or several, when a new `start` arrives while
    /// the previous period is ending).
    private func listen() {
        while true {
            let session = currentSession()
            runPeriod(session: session)
            let again = state.withLock { state -> Bool in
                if state.command == .listen && state.session != session { return true }
                state.listening = false
                if state.command == .listen { state.command = .stop }
                return false
            }
            if !again { return }
        }
    }

    private func makeSource() -> (any AudioSource)? {
        if let path = options.audioFile {
            do {
                return try WAVFileSource(path: path, realTime: !options.fast)
            } catch {
                return nil
            }
        }
        return PulseSource(device: options.device)
    }

    private func runPeriod(session: Int?) {
        if recognizer == nil {
            recognizer = PocketSphinxRecognizer(model: options.model)
            if recognizer == nil {
                Log.note("could not load the speech model")
                output.send(DictationEvent(type: "error", session: session, message: "no speech model"))
                return
            }
        }
        guard let recognizer else { return }
        guard let source = makeSource() else {
            Log.note("could not open the audio source")
            output.send(DictationEvent(type: "error", session: session, message: "no microphone"))
            return
        }
        guard recognizer.begin() else {
            output.send(DictationEvent(type: "error", session: session, message: "recogniser failed"))
            return
        }
        output.send(DictationEvent(type: "listening", session: session))
        var samples = [Int16](repeating: 0, count: Self.blockSamples)
        var lastPartial = ""
        while true {
            let command = state.withLock { state in state.session == session ? state.command : .cancel }
            if command == .cancel {
                recognizer.discard()
                break
            }
            if command == .stop {
                // What was said just before the key is still in the sound server's buffer.
                drain(source, into: recognizer, samples: &samples, session: session)
                sendFinal(recognizer.finish(), session: session)
                break
            }
            let count = samples.withUnsafeMutableBufferPointer { source.read(into: $0) }
            if count < 0 {
                recognizer.discard()
                output.send(DictationEvent(type: "error", session: session, message: "audio failed"))
                return
            }
            if count == 0 {
                // The end of an audio file: as if the user had stopped.
                sendFinal(recognizer.finish(), session: session)
                break
            }
            let step = samples.withUnsafeBufferPointer { recognizer.feed(UnsafeBufferPointer(rebasing: $0[0..<count])) }
            output.send(DictationEvent(type: "level", session: session, level: Self.level(samples[0..<count])))
            if let final = step.final {
                sendFinal(final, session: session)
                lastPartial = ""
            }
            let partial = Self.clean(step.partial)
            if partial != lastPartial {
                lastPartial = partial
                if !partial.isEmpty { output.send(DictationEvent(type: "partial", session: session, text: partial)) }
            }
        }
        output.send(DictationEvent(type: "stopped", session: session))
    }

    /// Longest tail read after `stop` (a stuck source must not hold the final back).
    static let maximumDrainSamples = 3 * 16000

    /// Feeds what the source has already recorded; finals found on the way are sent.
    private func drain(
        _ source: any AudioSource, into recognizer: any SpeechRecognizer, samples: inout [Int16], session: Int?
    ) {
        var left = min(source.bufferedSamples(), Self.maximumDrainSamples)
        while left > 0 {
            let wanted = min(left, samples.count)
            let count = samples.withUnsafeMutableBufferPointer {
                source.read(into: UnsafeMutableBufferPointer(rebasing: $0[0..<wanted]))
            }
            if count <= 0 { return }
            left -= count
            let step = samples.withUnsafeBufferPointer { recognizer.feed(UnsafeBufferPointer(rebasing: $0[0..<count])) }
            if let final = step.final { sendFinal(final, session: session) }
        }
    }

    private func sendFinal(_ text: String?, session: Int?) {
        guard let text else { return }
        let cleaned = Self.clean(text)
        guard !cleaned.isEmpty else { return }
        output.send(DictationEvent(type: "final", session: session, text: cleaned))
    }

    /// A hypothesis as sent: normalised, cut to the protocol's limit, only acceptable characters.
    static func clean(_ text: String) -> String {
        let words = DictationText.normalized(text)
        let cut = String(String.UnicodeScalarView(words.unicodeScalars.prefix(DictationProtocol.maximumTextScalars)))
        return DictationText.isAcceptable(cut) ? cut : ""
    }

    /// Input level 0…1: RMS in dBFS mapped from -60…0 dB, rounded to two decimals.
    static func level(_ samples: ArraySlice<Int16>) -> Double {
        guard !samples.isEmpty else { return 0 }
        var sum = 0.0
        for sample in samples { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(samples.count)).squareRoot() / 32768
        guard rms > 0 else { return 0 }
        let decibels = 20 * log10(rms)
        let scaled = min(1, max(0, (decibels + 60) / 60))
        return (scaled * 100).rounded() / 100
    }
}
