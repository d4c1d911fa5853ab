import InklingCore

/// One row of the microphone drop-down: the sound server's source name to store in GSettings
/// `dictation-device` (empty: the sound server's default source) and what the row says.
public struct MicrophoneRow: Equatable, Sendable {
    public let device: String
    public let label: String
}

/// The microphone choice on the Dictation page.
///
/// The sources come from `pactl list short sources` (the app runs it once when the page opens
/// and on Refresh): the list is needed once, not followed, so libpulse's asynchronous main loop
/// inside the GTK app would be code without a use; pactl talks to PulseAudio and to PipeWire's
/// pulse server alike, and `pulseaudio-utils` is already installed for the sound-server tests.
public enum MicrophoneChoices {
    /// The row for an empty setting: whatever the sound server's default source is.
    public static var defaultLabel: String { tr("Default") }

    /// Source names from `pactl list short sources` (tab-separated: index, name, driver, format,
    /// state). Monitors (`….monitor`) record what the speakers play, not a voice, and are left out.
    public static func sources(pactlShortSources output: String) -> [String] {
        var names: [String] = []
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 2 else { continue }
            let name = fields[1].trimmed()
            if name.isEmpty || name.hasSuffix(".monitor") || names.contains(name) { continue }
            names.append(name)
        }
        return names
    }

    /// The rows: the default first, then each source; a stored source that is not connected now
    /// keeps a row (so opening the page never changes the setting) that says so.
    public static func rows(sources: [String], stored: String) -> [MicrophoneRow] {
        var rows = [MicrophoneRow(device: "", label: defaultLabel)]
        rows += sources.map { MicrophoneRow(device: $0, label: $0) }
        let storedName = stored.trimmed()
        if !storedName.isEmpty && !sources.contains(storedName) {
            rows.append(MicrophoneRow(device: storedName, label: "\(storedName) (not connected)"))
        }
        return rows
    }

    /// The row that shows `stored` (the default row for an empty setting).
    public static func index(of stored: String, in rows: [MicrophoneRow]) -> Int {
        rows.firstIndex { $0.device == stored.trimmed() } ?? 0
    }

    /// The helper's arguments for a source: none for the default.
    public static func helperArguments(device: String) -> [String] {
        let name = device.trimmed()
        return name.isEmpty ? [] : ["--device", name]
    }
}

/// The page's language row: which languages can be dictated (only those with a speech model).
public enum DictationLanguage {
    /// Languages whose speech model the helper has (PocketSphinx's US English from Debian).
    public static let withModel = ["en"]

    /// What the row says for the active language pack (`en`, `de`…).
    public static func summary(activeLanguage: String) -> String {
        let code = activeLanguage.split(separator: "-").first.map(String.init)?.lowercased() ?? ""
        if withModel.contains(code) || code.isEmpty {
            return tr("English (US). English is the only language with a speech model so far.")
        }
        return tr(
            "English (US) only: there is no speech model for the active language ({language}) yet, so dictation hears English.",
            ["language": activeLanguage])
    }
}

/// A microphone test on the Dictation page: the helper's JSON lines turned into what the page
/// shows (the level meter, the finalized text, the state). Partials are ignored: the test shows
/// what would be typed, which is only finalized text.
public struct DictationTestRun: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        case starting, listening, finished
        case failed(String)
    }

    public private(set) var state: State = .starting
    /// The input level, 0…1, for the meter (0 once finished).
    public private(set) var level: Double = 0
    /// The finalized utterances, in order.
    public private(set) var heard: [String] = []

    public init() {}

    /// The session number the test uses in its requests.
    public static let session = 1
    /// How long the test listens before it asks the helper to stop.
    public static let listenSeconds = 10

    /// The line to send to begin.
    public static var startLine: String { DictationRequest(type: "start", session: session).line }
    /// The line to send when the time is up (the helper finalizes what it heard, then `stopped`).
    public static var stopLine: String { DictationRequest(type: "stop", session: session).line }

    public var isRunning: Bool { state == .starting || state == .listening }

    /// Takes one line from the helper.
    public mutating func receive(_ line: String) {
        guard isRunning, let event = DictationEvent.parse(line) else { return }
        if let session = event.session, session != Self.session { return }
        switch event.type {
        case "listening": state = .listening
        case "level": level = min(1, max(0, event.level ?? 0))
        case "final":
            if let text = event.text?.trimmed(), !text.isEmpty { heard.append(text) }
        case "error": finish(.failed(event.message ?? "the speech helper reported an error"))
        case "stopped": finish(.finished)
        default: break
        }
    }

    /// The helper exited (or could not start) before it said `stopped`.
    public mutating func helperEnded(_ why: String = tr("the speech helper stopped")) {
        if isRunning { finish(.failed(why)) }
    }

    private mutating func finish(_ end: State) {
        state = end
        level = 0
    }

    /// The sentence under the test button.
    public var status: String {
        switch state {
        case .starting: return tr("Starting the speech helper…")
        case .listening: return heard.isEmpty ? tr("Say something…") : tr("Heard: {text}", ["text": heardText])
        case .finished:
            return heard.isEmpty
                ? tr("Heard nothing. Check the microphone and its level.") : tr("Heard: {text}", ["text": heardText])
        case .failed(let why): return tr("The test failed: {problem}", ["problem": why])
        }
    }

    /// Everything finalized, as it would be typed (one space between utterances).
    public var heardText: String { heard.joined(separator: " ") }
}
