/// What `inkling packs` may download and for how long: the decisions behind every fetch of a
/// manifest or a pack, including each redirect hop.
///
/// Only `https://` is allowed, and plain `http://` only to this machine (a local mirror or a
/// test server): the manifest carries both the URL and the SHA-256 of each pack, so a manifest
/// read in clear text from the network gives no integrity at all. Every other scheme libcurl
/// knows (`file:`, `gopher:`, `dict:`, `ftp:`, `smb:`, …) could read local files or send
/// arbitrary bytes to local services, so none of them is ever passed to it.
public enum PackDownload {
    /// The scheme a checked URL uses; the downloader allows libcurl exactly this one protocol.
    public enum Scheme: String, Equatable, Sendable {
        case https
        /// Plain HTTP, to a loopback host only.
        case loopbackHTTP = "http"
    }

    /// Why a URL is refused (one sentence naming it).
    public enum Problem: Error, Equatable, CustomStringConvertible, Sendable {
        case malformed(String)
        case scheme(String)
        case plainHTTPToNetwork(String)
        case credentials(String)

        public var description: String {
            switch self {
            case .malformed(let url):
                return
                    "'\(PackDownload.shown(url))' is not a usable download URL (it needs https://HOST/…, without spaces or control characters)"
            case .scheme(let url):
                return
                    "'\(PackDownload.shown(url))' is refused: packs and manifests are downloaded over https:// only (http:// only from this machine)"
            case .plainHTTPToNetwork(let url):
                return
                    "'\(PackDownload.shown(url))' is refused: plain http:// is allowed only to this machine (localhost, 127.x.x.x, [::1]); use https://"
            case .credentials(let url):
                return "'\(PackDownload.shown(url))' is refused: download URLs must not contain a user name or password"
            }
        }
    }

    /// A URL as shown in a message: unprintable characters escaped, long ones shortened.
    public static func shown(_ url: String) -> String {
        var out = ""
        for scalar in url.unicodeScalars.prefix(160) {
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return url.unicodeScalars.count > 160 ? out + "…" : out
    }

    /// The longest URL accepted.
    public static let maximumURLLength = 2048

    /// Checks an absolute URL before anything is fetched from it; returns its scheme.
    public static func check(_ url: String) throws(Problem) -> Scheme {
        guard !url.isEmpty, url.utf8.count <= maximumURLLength,
            url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" })
        else { throw .malformed(url) }
        guard let scheme = scheme(of: url) else { throw .malformed(url) }
        let lowered = scheme.lowercased()
        guard lowered == "https" || lowered == "http" else { throw .scheme(url) }
        let afterScheme = url.dropFirst(scheme.count + 1)
        guard afterScheme.hasPrefix("//") else { throw .malformed(url) }
        let authority = afterScheme.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { throw .credentials(url) }
        guard let host = host(ofAuthority: String(authority)), !host.isEmpty else { throw .malformed(url) }
        if lowered == "https" { return .https }
        guard isLoopback(host: host) else { throw .plainHTTPToNetwork(url) }
        return .loopbackHTTP
    }

    /// `url`'s scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`, before `:`), if it has one.
    public static func scheme(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let candidate = url[..<colon]
        guard let first = candidate.unicodeScalars.first, first.isASCIILetter,
            candidate.unicodeScalars.allSatisfy({
                $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "."
            })
        else { return nil }
        return String(candidate)
    }

    /// The host of an authority (`host`, `host:port`, `[v6]:port`), lowercased; nil when malformed.
    static func host(ofAuthority authority: String) -> String? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else {
                return nil
            }
            return authority[...close].lowercased()
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        if parts.count == 2, !parts[1].allSatisfy(\.isASCIIDigit) { return nil }
        return parts[0].lowercased()
    }

    /// Whether a host names this machine: `localhost`, `127.0.0.0/8` in dotted form, or `[::1]`.
    static func isLoopback(host: String) -> Bool {
        if host == "localhost" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { $0.count <= 3 && $0.allSatisfy(\.isASCIIDigit) && UInt8($0) != nil }
    }

    /// A URL from a manifest, resolved against the manifest's own URL when it is relative
    /// (`packs/de.inkpack`, `/packs/de.inkpack`, `//mirror/de.inkpack`). A URL with any scheme
    /// is returned as it is (and then checked like any other).
    public static func resolve(_ url: String, against base: String) -> String {
        if scheme(of: url) != nil || base.isEmpty { return url }
        guard let baseScheme = scheme(of: base), base.dropFirst(baseScheme.count + 1).hasPrefix("//") else {
            return url
        }
        if url.hasPrefix("//") { return baseScheme + ":" + url }
        let afterScheme = base.dropFirst(baseScheme.count + 3)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let origin = baseScheme + "://" + authority
        if url.hasPrefix("/") { return origin + url }
        let path = afterScheme.dropFirst(authority.count).prefix { $0 != "?" && $0 != "#" }
        let directory = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        return origin + directory + url
    }

    /// How long one download may take in all: a fixed allowance for connecting and starting
    /// plus the expected size at a slow but working rate, so a server that drips bytes just fast
    /// enough to dodge the stall detector is still abandoned.
    public static func deadlineSeconds(
        expectedBytes: Int, baseSeconds: Int = 60, minimumBytesPerSecond: Int = 16 * 1024
    ) -> Int {
        let bytes = max(0, expectedBytes)
        let rate = max(1, minimumBytesPerSecond)
        return max(1, baseSeconds) + (bytes + rate - 1) / rate
    }

    /// The hidden name a download is written to before it is checked and renamed:
    /// `.<final name>.part-<pid>-<nonce>` (the pid says whose it is, for cleaning up after a
    /// process that was killed).
    public static func partialName(for finalName: String, processID: Int32, nonce: UInt32) -> String {
        ".\(finalName).part-\(processID)-\(nonce)"
    }

    /// The process that writes a partial download, if `name` is one.
    public static func partialOwner(_ name: String) -> Int32? {
        guard name.hasPrefix("."), let marker = name.ranges(of: ".part-").last else { return nil }
        let fields = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 2, let pid = Int32(fields[0]), pid > 0, UInt32(fields[1]) != nil else { return nil }
        return pid
    }

    /// Whether `name` is a partial download left behind by a process that no longer runs
    /// (killed mid-download): such files are never renamed into place and only waste space.
    public static func isAbandonedPartial(_ name: String, isRunning: (Int32) -> Bool) -> Bool {
        guard let owner = partialOwner(name) else { return false }
        return !isRunning(owner)
    }

    /// At most this many redirects are followed (each hop checked like the first URL).
    public static let maximumRedirects = 5
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
