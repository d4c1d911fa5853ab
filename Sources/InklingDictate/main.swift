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

LineSplitter.readStandardInput(limit: DictationProtocol.maximumLineBytes, bufferSize: 16384) { item in
    switch item {
    case .line(let line):
        return service.handle(line: line) != .shutdown
    case .oversized(let length):
        service.ignore(bytes: length)
        return true
    }
}
output.exit()
