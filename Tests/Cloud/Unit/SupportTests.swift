import Glibc
import InklingCommandLine
import Testing

@testable import InklingCloud

@Suite("LRUCache")
struct LRUCacheTests {
    @Test func evictsTheLeastRecentlyUsed() {
        var cache = LRUCache<String, Int>(capacity: 3)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        cache.insert(3, for: "c")
        #expect(cache.value(for: "a") == 1)  // a is now the most recent
        cache.insert(4, for: "d")  // evicts b
        #expect(!cache.contains("b"))
        #expect(cache.contains("a") && cache.contains("c") && cache.contains("d"))
        #expect(cache.count == 3)
    }

    @Test func updatingAnEntryDoesNotEvict() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        cache.insert(3, for: "a")
        #expect(cache.count == 2)
        #expect(cache.value(for: "a") == 3)
        #expect(cache.value(for: "b") == 2)
    }

    @Test func staysBounded() {
        var cache = LRUCache<Int, Int>(capacity: 64)
        for i in 0..<1000 { cache.insert(i, for: i) }
        #expect(cache.count == 64)
        #expect(cache.contains(999) && !cache.contains(935))
    }
}

@Suite("LineSplitter")
struct LineSplitterTests {
    @Test func splitsAcrossFeeds() {
        var splitter = LineSplitter(limit: 100)
        #expect(splitter.feed(Array("ab".utf8)) == [])
        #expect(
            splitter.feed(Array("c\r\nd\n\n".utf8)) == [.line(Array("abc".utf8)), .line(Array("d".utf8)), .line([])])
    }

    @Test func dropsOversizedLinesWithoutKeepingThem() {
        var splitter = LineSplitter(limit: 4)
        #expect(splitter.feed(Array("abcd\n".utf8)) == [.line(Array("abcd".utf8))])
        #expect(splitter.feed(Array("abcdefgh".utf8)) == [])
        #expect(splitter.feed(Array("ij\nok\n".utf8)) == [.oversized(10), .line(Array("ok".utf8))])
    }
}

@Suite("Options")
struct OptionsTests {
    @Test func parsesAndNormalizes() throws {
        let options = try Options.parse([
            "--endpoint", "https://api.example.com/v1/", "--model", "m", "--timeout-ms", "2500", "--key-file", "/k",
        ])
        #expect(options.endpoint == "https://api.example.com/v1")
        #expect(options.model == "m")
        #expect(options.timeoutMilliseconds == 2500)
        #expect(options.keyFile == "/k")
        #expect(options.useKeyring)
        #expect(options.breakerMilliseconds == 30_000)
    }

    @Test(
        "plain http only to this machine",
        arguments: [
            ("http://127.0.0.1:11434/v1", true), ("http://localhost:8080", true), ("http://[::1]:8080/v1", true),
            ("http://127.1.2.3", true), ("https://example.com", true), ("http://example.com/v1", false),
            ("http://192.168.1.5:11434/v1", false), ("http://127.0.0.1.evil.com/v1", false),
            ("https://user:secret@example.com", false), ("https://example.com/v1?key=x", false),
            ("ftp://example.com", false), ("https://", false), ("https://exa mple.com", false),
        ])
    func endpointRules(url: String, accepted: Bool) {
        #expect(((try? Options.parse(["--endpoint", url, "--model", "m"])) != nil) == accepted)
    }

    @Test func rejectsKeysAndUnknownArguments() {
        #expect(throws: UsageError.self) {
            try Options.parse(["--endpoint", "https://e", "--model", "m", "--api-key", "x"])
        }
        // No endpoint (the model is optional).
        #expect(throws: UsageError.self) { try Options.parse(["--model", "m"]) }
        #expect(throws: UsageError.self) {
            try Options.parse(["--endpoint", "https://e", "--model", "m", "--timeout-ms", "5"])
        }
        #expect(throws: UsageError.self) { try Options.parse(["--endpoint", "https://e", "--model"]) }
    }

    @Test func defaultKeyFile() {
        #expect(
            Options.defaultKeyFile(environment: { ["XDG_CONFIG_HOME": "/c", "HOME": "/h"][$0] })
                == "/c/inkling/cloud-key")
        #expect(
            Options.defaultKeyFile(environment: { ["XDG_CONFIG_HOME": "relative", "HOME": "/h"][$0] })
                == "/h/.config/inkling/cloud-key")
        #expect(Options.defaultKeyFile(environment: { _ in nil }) == nil)
    }
}

@Suite("KeySource")
struct KeySourceTests {
    @Test func parsesTheFirstLine() {
        #expect(KeySource.parseKey(Array("  sk-abc \n second\n".utf8)) == .key("sk-abc"))
        #expect(KeySource.parseKey(Array("\n\n".utf8)) == .missing)
        guard case .refused = KeySource.parseKey(Array("sk abc\n".utf8)) else {
            Issue.record("space accepted")
            return
        }
        guard case .refused = KeySource.parseKey(Array("sk-é\n".utf8)) else {
            Issue.record("non-ASCII accepted")
            return
        }
    }

    func withFile(mode: mode_t, contents: String, _ body: (String) -> Void) {
        var template = Array("/tmp/inkling-key-test-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        precondition(fd >= 0)
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let bytes = Array(contents.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        chmod(path, mode)
        body(path)
        unlink(path)
    }

    @Test func acceptsOnlyPrivateRegularFiles() {
        withFile(mode: 0o600, contents: "sk-private\n") {
            #expect(KeySource.readKeyFile(path: $0) == .key("sk-private"))
        }
        withFile(mode: 0o400, contents: "sk-private\n") {
            #expect(KeySource.readKeyFile(path: $0) == .key("sk-private"))
        }
        withFile(mode: 0o644, contents: "sk-open\n") {
            guard case .refused = KeySource.readKeyFile(path: $0) else {
                Issue.record("0644 accepted")
                return
            }
        }
        withFile(mode: 0o620, contents: "sk-open\n") {
            guard case .refused = KeySource.readKeyFile(path: $0) else {
                Issue.record("0620 accepted")
                return
            }
        }
        withFile(mode: 0o600, contents: "sk\n") { path in
            guard case .refused = KeySource.readKeyFile(path: path, owner: geteuid() &+ 1) else {
                Issue.record("other owner accepted")
                return
            }
        }
        #expect(KeySource.readKeyFile(path: "/nonexistent/inkling/cloud-key") == .missing)
        guard case .refused = KeySource.readKeyFile(path: "/tmp") else {
            Issue.record("directory accepted")
            return
        }
    }
}

@Suite("Options.isLoopback")
struct LoopbackTests {
    @Test func endpointsOnThisMachine() throws {
        #expect(try Options.parse(["--endpoint", "http://127.0.0.1:11434/v1", "--model", "m"]).isLoopback)
        #expect(try Options.parse(["--endpoint", "https://localhost/v1", "--model", "m"]).isLoopback)
        #expect(try Options.parse(["--endpoint", "http://[::1]:8080", "--model", "m"]).isLoopback)
        #expect(try !Options.parse(["--endpoint", "https://api.example.com/v1", "--model", "m"]).isLoopback)
    }
}
