import FoundationEssentials
import Testing

@testable import InklingCore

/// What `inkling packs` may fetch, how relative manifest URLs resolve, deadlines, and partial files.
@Suite("PackDownload")
struct PackDownloadTests {
    @Test(arguments: [
        "https://example.org/packs/de.inkpack", "HTTPS://Example.org:8443/x?y=1", "https://[2001:db8::1]/de.inkpack",
    ])
    func httpsIsAllowedAnywhere(_ url: String) throws {
        #expect(try PackDownload.check(url) == .https)
    }

    @Test(arguments: [
        "http://127.0.0.1:8000/manifest.json", "http://localhost/x", "http://LOCALHOST:1/x", "http://[::1]:9/x",
        "http://127.1.2.3/x",
    ])
    func plainHTTPIsAllowedToThisMachineOnly(_ url: String) throws {
        #expect(try PackDownload.check(url) == .loopbackHTTP)
    }

    @Test(arguments: [
        "gopher://127.0.0.1:70/_HELLO", "dict://127.0.0.1:2628/d:x", "file:///etc/passwd", "file:/etc/passwd",
        "ftp://example.org/x",
        "smb://server/share", "ldap://127.0.0.1/", "scp://host/x", "telnet://127.0.0.1:23", "HTTPs+x://host/x",
    ])
    func otherSchemesAreRefused(_ url: String) {
        #expect(throws: PackDownload.Problem.scheme(url)) { try PackDownload.check(url) }
    }

    @Test(arguments: [
        "http://example.org/de.inkpack", "http://127.0.0.1.evil.example/x", "http://localhost.evil.example/x",
        "http://128.0.0.1/x", "http://127.0.0.256/x", "http://127.1/x", "http://[::2]/x",
        "http://evil.example#@127.0.0.1/",
        "http://evil.example?@127.0.0.1/",
    ])
    func plainHTTPToAnotherMachineIsRefused(_ url: String) {
        #expect(throws: PackDownload.Problem.plainHTTPToNetwork(url)) { try PackDownload.check(url) }
    }

    @Test(arguments: [
        "http://127.0.0.1@evil.example/x", "https://user:secret@example.org/x", "http://evil.example@127.0.0.1/x",
    ])
    func credentialsAreRefused(_ url: String) {
        #expect(throws: PackDownload.Problem.credentials(url)) { try PackDownload.check(url) }
    }

    @Test(arguments: [
        "", "example.org/x", "https:example.org", "https:///x", "https://exa mple.org/x", "https://example.org/\n",
        "https://exämple.org/",
        "http://127.0.0.1\\@evil.example/", "https://host:port/x", "http://[::1/x", "https://a:1:2/x",
        "https://example.org/" + String(repeating: "a", count: 2048),
    ])
    func malformedURLsAreRefused(_ url: String) {
        #expect(throws: PackDownload.Problem.malformed(url)) { try PackDownload.check(url) }
    }

    @Test func messagesNameTheURLAndEscapeControls() {
        let message = PackDownload.Problem.scheme("gopher://127.0.0.1:70/_\u{1b}x").description
        #expect(message.contains("gopher://127.0.0.1:70/_"))
        #expect(message.contains("https://"))
        #expect(!message.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func relativeURLsResolveAgainstTheManifest() {
        let base = "http://127.0.0.1:8000/dist/manifest.json?v=2"
        #expect(
            PackDownload.resolve("packs/de.inkpack", against: base) == "http://127.0.0.1:8000/dist/packs/de.inkpack")
        #expect(PackDownload.resolve("/packs/de.inkpack", against: base) == "http://127.0.0.1:8000/packs/de.inkpack")
        #expect(
            PackDownload.resolve("//mirror.example/de.inkpack", against: base) == "http://mirror.example/de.inkpack")
        #expect(PackDownload.resolve("de.inkpack", against: "https://example.org") == "https://example.org/de.inkpack")
        #expect(
            PackDownload.resolve("https://cdn.example/de.inkpack", against: base) == "https://cdn.example/de.inkpack")
        // Anything with a scheme stays absolute (and is then refused by `check`), even without "//".
        #expect(PackDownload.resolve("file:/etc/passwd", against: base) == "file:/etc/passwd")
        #expect(PackDownload.resolve("gopher://127.0.0.1/_x", against: base) == "gopher://127.0.0.1/_x")
        #expect(PackDownload.resolve("packs/de.inkpack", against: "") == "packs/de.inkpack")
    }

    @Test func theDeadlineGrowsWithTheSize() {
        #expect(PackDownload.deadlineSeconds(expectedBytes: 0, baseSeconds: 60, minimumBytesPerSecond: 1000) == 60)
        #expect(
            PackDownload.deadlineSeconds(expectedBytes: 10_000_000, baseSeconds: 60, minimumBytesPerSecond: 16384) == 60
                + 611)
        #expect(PackDownload.deadlineSeconds(expectedBytes: 1, baseSeconds: 2, minimumBytesPerSecond: 1000) == 3)
        // A 600 B/s drip of a 10 MB pack (about 4.6 hours) is abandoned within about 11 minutes.
        let drip = 10_000_000 / 600
        #expect(PackDownload.deadlineSeconds(expectedBytes: 10_000_000) < drip / 10)
        #expect(PackDownload.deadlineSeconds(expectedBytes: -5, baseSeconds: 0, minimumBytesPerSecond: 0) == 1)
    }

    @Test func abandonedPartialFilesAreRecognisedByTheirOwner() {
        let name = PackDownload.partialName(for: "de.inkpack", processID: 4242, nonce: 17)
        #expect(name == ".de.inkpack.part-4242-17")
        #expect(PackDownload.partialOwner(name) == 4242)
        #expect(PackDownload.isAbandonedPartial(name, isRunning: { _ in false }))
        #expect(!PackDownload.isAbandonedPartial(name, isRunning: { $0 == 4242 }))
        for other in [
            "de.inkpack", ".de.inkpack", "de.inkpack.part-1-2", ".x.part-abc-1", ".x.part-1-2-3", ".x.part--1-2",
            ".x.part-0-2", "manifest.json",
        ] {
            #expect(PackDownload.partialOwner(other) == nil)
            #expect(!PackDownload.isAbandonedPartial(other, isRunning: { _ in false }))
        }
    }
}
