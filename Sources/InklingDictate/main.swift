import CPocketSphinx
import Glibc
import InklingCommandLine
import InklingCore
import InklingLog

// inkling-dictate: the dictation helper. Speaks the JSON-lines protocol of `DictationProtocol`
// on stdin/stdout and recognises speech on this machine. See Service.swift.

ProcessLog.setUp(identifier: "inkling-dictate")
signal(SIGPIPE, SIG_IGN)
// Before anything is heard: no core dumps, no ptrace by other processes of the user.
if inkling_dictate_harden_process() != 0 { Log.note("could not disable core dumps") }

let options = Terminal.parse(
    Array(CommandLine.arguments.dropFirst()), as: Options.self, version: InklingVersion.current,
    reportUsage: Log.usage)

let output = Output()
let service = Service(options: options, output: output)
output.send(DictationEvent(type: "hello", session: nil))

var splitter = LineSplitter(limit: DictationProtocol.maximumLineBytes)
var buffer = [UInt8](repeating: 0, count: 16384)
while true {
    let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
    if count < 0, errno == EINTR { continue }
    if count <= 0 { output.exit() }
    for item in splitter.feed(buffer[0..<count]) {
        switch item {
        case .line(let line):
            if service.handle(line: line) == .shutdown { output.exit() }
        case .oversized(let length):
            service.ignore(bytes: length)
        }
    }
}
