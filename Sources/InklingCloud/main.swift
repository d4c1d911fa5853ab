import CCurl
import Dispatch
import Glibc
import InklingCloudClient
import InklingCommandLine
import InklingCore
import InklingLog

// inkling-cloud: the cloud-check helper. Speaks the JSON-lines protocol of `CloudProtocol` on
// stdin/stdout and asks an OpenAI-compatible chat-completions endpoint. See Service.swift.

ProcessLog.setUp(identifier: "inkling-cloud")
signal(SIGPIPE, SIG_IGN)
if inkling_harden_process() != 0 { Log.note("could not disable core dumps") }

let options = Terminal.parse(
    Array(CommandLine.arguments.dropFirst()), as: Options.self, version: InklingVersion.current,
    reportUsage: Log.usage)

HTTPClient.globalInit()

let environment: @Sendable (String) -> String? = { name in
    if let value = Options.environment(name) { return value }
    if name == "HOME", let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
    return nil
}

let output = Output()
let service = Service(options: options, clock: SystemClock(), output: output)
output.send(CloudReply(type: "hello", id: nil))

DispatchQueue(label: "inkling-cloud.worker").async {
    service.runWorker(environment: environment)
}

LineSplitter.readStandardInput(limit: CloudProtocol.maximumLineBytes, bufferSize: 65536) { item in
    switch item {
    case .line(let line):
        return service.handle(line: line) != .shutdown
    case .oversized(let length):
        service.ignore(bytes: length, reason: "too long")
        return true
    }
}
output.exit()
