import Glibc
import InklingCommandLine
import Testing

@Suite struct RuntimeFileTests {
    /// A fresh folder standing in for `$XDG_RUNTIME_DIR`.
    func runtimeFolder() -> String {
        var template = Array("/tmp/inkling-runtime-file-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        #expect(made != nil)
        return String(cString: template)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        #expect(lstat(path, &info) == 0)
        return info.st_mode & 0o777
    }

    @Test func replaceCreatesThePrivateFolderAndLeavesNoTemporaryFile() throws {
        let runtime = runtimeFolder()
        let path = runtime + "/inkling/status"
        #expect(RuntimeFile.replace(path: path, text: "one\n"))
        #expect(RuntimeFile.replace(path: path, text: "two\n"))
        #expect(RuntimeFile.read(path: path, limit: 64)?.text == "two\n")
        #expect(mode(runtime + "/inkling") == 0o700)
        #expect(mode(path) == 0o600)
        let folder = try #require(opendir(runtime + "/inkling"))
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(folder)
        #expect(names == ["status"])
    }

    @Test func readIsBoundedAndRefusesLinksAndFIFOs() {
        let runtime = runtimeFolder()
        #expect(RuntimeFile.replace(path: runtime + "/long", text: String(repeating: "x", count: 1000)))
        #expect(RuntimeFile.read(path: runtime + "/long", limit: 10)?.text == String(repeating: "x", count: 10))
        #expect(symlink(runtime + "/long", runtime + "/link") == 0)
        #expect(RuntimeFile.read(path: runtime + "/link", limit: 10) == nil)
        // A FIFO nobody writes to: read must neither block nor call it a file.
        #expect(mkfifo(runtime + "/fifo", 0o600) == 0)
        #expect(RuntimeFile.read(path: runtime + "/fifo", limit: 10) == nil)
        #expect(RuntimeFile.read(path: runtime + "/missing", limit: 10) == nil)
    }

    @Test func replaceDoesNotWriteThroughALinkAtTheTemporaryName() {
        let runtime = runtimeFolder()
        let target = runtime + "/target"
        #expect(RuntimeFile.replace(path: target, text: "keep\n"))
        // Someone else's link where the temporary file goes: refused, the target untouched.
        #expect(symlink(target, runtime + "/status.\(getpid())") == 0)
        #expect(!RuntimeFile.replace(path: runtime + "/status", text: "evil\n"))
        #expect(RuntimeFile.read(path: target, limit: 64)?.text == "keep\n")
    }
}
