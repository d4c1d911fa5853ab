import InklingCore

/// The Languages page's model: rows parsed from `inkling packs list`, the progress of a
/// download, and the CLI's messages turned into sentences.
///
/// The app runs the `inkling` command for every pack operation (list, install, verify, remove)
/// instead of linking its own copy: the URL checks, the SHA-256 and structure checks, the
/// partial-file handling and the cleanup on SIGTERM (how Cancel works) stay in one place.
public struct PackRow: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        case bundled
        case installed
        /// Installed by the system's package manager (`inkling-lang-de`): usable, removed with apt.
        case system
        case available
        /// The manifest's URL is refused (not https://): shown, cannot be installed.
        case refused
    }
    public var language: String
    public var displayName: String
    public var version: String
    public var sizeKiB: Int
    public var state: State
    /// The pack needs a newer engine (`needs Inkling X`), if so.
    public var needsVersion: String?

    public init(
        language: String, displayName: String, version: String, sizeKiB: Int, state: State, needsVersion: String? = nil
    ) {
        self.language = language
        self.displayName = displayName
        self.version = version
        self.sizeKiB = sizeKiB
        self.state = state
        self.needsVersion = needsVersion
    }

    /// The row's subtitle.
    public var subtitle: String {
        var parts = [
            tr("version {version}", ["version": version]),
            sizeKiB >= 1024
                ? tr("{size} MB", ["size": String((sizeKiB + 512) / 1024)])
                : tr("{size} KB", ["size": String(sizeKiB)]),
        ]
        switch state {
        case .bundled: parts.append(tr("included with Inkling"))
        case .installed: parts.append(tr("installed"))
        case .system: parts.append(tr("installed by the system (remove it with the package manager)"))
        case .available: parts.append(tr("not installed"))
        case .refused: parts.append(tr("cannot be downloaded (the manifest gives an insecure address)"))
        }
        if let needsVersion { parts.append(tr("needs Inkling {version} or newer", ["version": needsVersion])) }
        return parts.joined(separator: " · ")
    }

    public var canDownload: Bool { state == .available && needsVersion == nil }
    public var canRemove: Bool { state == .installed }
    public var canChoose: Bool { state == .installed || state == .bundled || state == .system }

    /// Parses the output of `inkling packs list` (tab-separated: code, name, version, `N KiB`,
    /// status); lines that do not fit are skipped. A "no manifest" line gives no rows.
    public static func parse(listOutput: String) -> [PackRow] {
        var rows: [PackRow] = []
        for line in listOutput.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, fields[3].hasSuffix(" KiB"), let size = Int(fields[3].dropLast(4)) else {
                continue
            }
            guard !fields[4].isEmpty else { continue }
            let statusParts = fields[4].split(separator: ", ").map(String.init)
            let state: State
            switch statusParts[0] {
            case "bundled": state = .bundled
            case "installed": state = .installed
            case "system": state = .system
            case "available": state = .available
            default: state = .refused
            }
            let needs = statusParts.dropFirst().first { $0.hasPrefix("needs Inkling ") }.map {
                String($0.dropFirst("needs Inkling ".count))
            }
            rows.append(
                PackRow(
                    language: fields[0], displayName: fields[1], version: fields[2], sizeKiB: size, state: state,
                    needsVersion: needs))
        }
        return rows
    }
}

/// A download's progress bar.
public enum PackProgress {
    /// The fraction for the progress bar: bytes of the partial file over the manifest's size,
    /// within 0…1 (a server that sends more is stopped by the CLI; the bar never overflows).
    public static func fraction(written: Int, expected: Int) -> Double {
        guard expected > 0, written > 0 else { return 0 }
        return min(1, Double(written) / Double(expected))
    }

    /// Whether `name` in the packs folder is the partial download of `language` by process `pid`
    /// (`PackDownload.partialName`: `.<lang>.inkpack.part-<pid>-<nonce>`).
    public static func isPartial(_ name: String, language: String, processID: Int32) -> Bool {
        name.hasPrefix(".\(language).inkpack.part-\(processID)-")
    }
}

/// The CLI's error output turned into one readable sentence for the Languages page.
public enum PackMessage {
    /// A sentence for a failed `inkling packs …` (its standard error, exit status non-zero).
    public static func sentence(forError output: String, action: String) -> String {
        let text = output.lowercased()
        let reason: String
        if text.contains("couldn't resolve host") || text.contains("could not resolve") {
            reason = tr("The download server could not be found. Check the network connection and try again.")
        } else if text.contains("couldn't connect") || text.contains("could not connect")
            || text.contains("connection refused")
            || text.contains("timeout was reached") || text.contains("took longer than")
        {
            reason = tr("No download server could be reached. Check the network connection and try again.")
        } else if text.contains("sha-256 mismatch") || text.contains("size ") && text.contains("expected") {
            reason = tr(
                "The downloaded file was damaged (it does not match its checksum), so it was not installed. Try again.")
        } else if text.contains("no space left") || text.contains("disk quota") {
            reason = tr("The disk is full. Free some space, then try again.")
        } else if text.contains("http 404") {
            reason = tr("The server does not have this pack (HTTP 404). The pack list may be out of date.")
        } else if text.contains("the server answered http") {
            reason = tr(
                "The server refused the download ({code}). Try again later.",
                ["code": firstMatch(of: "http ", in: output) ?? tr("an HTTP error")])
        } else if text.contains("no pack manifest") || text.contains("no manifest") {
            reason = tr("There is no list of languages yet. Set the address of a pack list first.")
        } else if text.contains("refused") && text.contains("https://") {
            reason = tr("The pack's address is not secure (https:// is required), so it was not downloaded.")
        } else if text.contains("corrupt") {
            reason = tr("The pack file is damaged. Remove it and download it again.")
        } else {
            let line =
                output.split(separator: "\n").last { !$0.isEmpty }.map(String.init) ?? tr("it failed without a message")
            reason = sentenceCase(line.hasPrefix("inkling: ") ? String(line.dropFirst(9)) : line)
        }
        return tr("{action} failed. {reason}", ["action": action, "reason": reason])
    }

    static func firstMatch(of prefix: String, in text: String) -> String? {
        let lowered = text.lowercased()
        guard let range = lowered.firstRange(of: prefix) else { return nil }
        let code = lowered[range.upperBound...].prefix { $0.isNumber }
        return code.isEmpty ? nil : "HTTP \(code)"
    }

    static func sentenceCase(_ text: String) -> String {
        guard let first = text.first else { return text }
        var out = first.uppercased() + text.dropFirst()
        if !(out.hasSuffix(".") || out.hasSuffix("!") || out.hasSuffix("?")) { out += "." }
        return out
    }
}
