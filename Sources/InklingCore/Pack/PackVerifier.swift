import FoundationEssentials

/// Checks a pack's bytes against its manifest entry: the one rule the CLI (`inkling packs
/// verify`, install, update) and the engine (before it loads a downloaded pack) both follow.
///
/// The bytes are read once by the caller (`PackFile.read(path:)`): size, SHA-256 and structure
/// are all checked on these very bytes. The SHA-256 itself is computed by the glue (GLib's
/// GChecksum), passed in as `sha256`.
public enum PackVerifier {
    /// The pack in `data` when it is sound; else why not, in words for a log or the terminal.
    public static func verify(
        _ data: Data, against entry: PackManifest.Entry, path: String = "", sha256: (Data) -> String?
    ) -> Result<LanguagePack, Refusal> {
        guard data.count == entry.size else {
            return .failure(Refusal("size \(data.count) bytes, expected \(entry.size)"))
        }
        guard let digest = sha256(data) else { return .failure(Refusal("cannot compute its SHA-256")) }
        guard digest == entry.sha256 else { return .failure(Refusal("SHA-256 mismatch")) }
        do {
            let pack = try LanguagePack(data: data, path: path)
            guard pack.language == entry.language else { return .failure(Refusal("it is a '\(pack.language)' pack")) }
            return .success(pack)
        } catch {
            return .failure(Refusal("\(error)"))
        }
    }

    /// Why a pack was refused.
    public struct Refusal: Error, Equatable, Sendable {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
    }
}
