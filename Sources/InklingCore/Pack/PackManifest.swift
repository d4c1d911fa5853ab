import FoundationEssentials

/// This build's version, compared with a pack's `minEngineVersion`.
public enum InklingVersion {
    public static let current = "0.1.0"

    /// Compares dotted version strings numerically (`0.10.0` > `0.9.1`); non-numbers count as 0.
    public static func compare(_ a: String, _ b: String) -> Int {
        let left = a.split(separator: ".").map { Int($0.prefix { $0.isNumber }) ?? 0 }
        let right = b.split(separator: ".").map { Int($0.prefix { $0.isNumber }) ?? 0 }
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? left[index] : 0
            let r = index < right.count ? right[index] : 0
            if l != r { return l < r ? -1 : 1 }
        }
        return 0
    }
}

/// The list of language packs: what exists, how big it is, its SHA-256 and where to get it.
public struct PackManifest: Codable, Equatable, Sendable {
    /// One pack.
    public struct Entry: Codable, Equatable, Sendable {
        public var language: String
        public var displayName: String
        public var version: String
        public var minEngineVersion: String
        public var file: String
        public var size: Int
        public var sha256: String
        public var url: String

        public init(
            language: String, displayName: String, version: String, minEngineVersion: String, file: String, size: Int,
            sha256: String, url: String
        ) {
            self.language = language
            self.displayName = displayName
            self.version = version
            self.minEngineVersion = minEngineVersion
            self.file = file
            self.size = size
            self.sha256 = sha256
            self.url = url
        }

        /// Whether this engine can read the pack.
        public var isSupported: Bool { InklingVersion.compare(minEngineVersion, InklingVersion.current) <= 0 }
    }

    /// The manifest format this build reads.
    public static let supportedFormat = 1

    public var formatVersion: Int
    public var packs: [Entry]

    public init(formatVersion: Int = PackManifest.supportedFormat, packs: [Entry]) {
        self.formatVersion = formatVersion
        self.packs = packs
    }

    /// Why a manifest could not be used.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case malformed
        case unsupportedFormat(Int)
        case invalidEntry(String)
        public var description: String {
            switch self {
            case .malformed: return "the pack manifest is not valid JSON of the expected shape"
            case .unsupportedFormat(let version):
                return
                    "the pack manifest has format \(version); this Inkling reads format \(PackManifest.supportedFormat)"
            case .invalidEntry(let language):
                return "the pack manifest's entry for '\(LanguageCode.printable(language))' is invalid"
            }
        }
    }

    /// Parses and checks a manifest.
    public static func parse(_ data: Data) throws(Problem) -> PackManifest {
        guard let manifest = try? JSONDecoder().decode(PackManifest.self, from: data) else { throw .malformed }
        guard manifest.formatVersion == supportedFormat else { throw .unsupportedFormat(manifest.formatVersion) }
        for entry in manifest.packs {
            let hexDigits = entry.sha256.unicodeScalars.allSatisfy {
                ("0"..."9").contains($0) || ("a"..."f").contains($0)
            }
            // The language becomes a file name in the packs folder: the one shared check.
            guard entry.size > 0, entry.sha256.count == 64, hexDigits, LanguageCode.isValid(entry.language),
                isShownSafely(entry.displayName), isVersion(entry.version), isVersion(entry.minEngineVersion)
            else { throw .invalidEntry(entry.language) }
        }
        return manifest
    }

    /// Whether a name from the manifest may be shown in the language menu and printed to a
    /// terminal: 1–64 visible characters, no control, bidi or invisible ones (a hostile manifest
    /// could otherwise send terminal escapes or reorder what the menu shows).
    static func isShownSafely(_ name: String) -> Bool {
        let count = name.unicodeScalars.count
        return (1...64).contains(count) && CloudText.isClean(name) && name.first != " " && name.last != " "
    }

    /// Whether a version is dotted ASCII (`1.2.0`, `0.1.0-beta+2`), at most 32 characters.
    static func isVersion(_ version: String) -> Bool {
        (1...32).contains(version.utf8.count)
            && version.unicodeScalars.allSatisfy {
                ("0"..."9").contains($0) || ("a"..."z").contains($0) || ("A"..."Z").contains($0)
                    || ".+-".unicodeScalars.contains($0)
            }
    }

    /// The entry for a language.
    public func entry(for language: String) -> Entry? { packs.first { $0.language == language } }
}

/// Where user data lives: `$XDG_DATA_HOME/inkling` (default `~/.local/share/inkling`).
public enum UserPaths {
    /// The folder for downloaded packs, the cached manifest and the user dictionary.
    public static func dataFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/inkling" }
        let home = environment["HOME"] ?? "/tmp"
        return home + "/.local/share/inkling"
    }

    /// Downloaded packs.
    public static func packFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        dataFolder(environment: environment) + "/packs"
    }
}
