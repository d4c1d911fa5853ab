import CPocketSphinx
import Glibc

/// Where audio comes from: 16 kHz mono signed 16-bit little-endian samples.
protocol AudioSource: AnyObject {
    /// Fills `buffer` with the next samples; the count read, 0 at the end of the audio, -1 on error.
    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int
    /// Samples already recorded but not yet read (what `stop` must still hear).
    func bufferedSamples() -> Int
}

/// The desktop's sound server through libpulse-simple, which PulseAudio and PipeWire (its
/// `pipewire-pulse` service) both serve: one small blocking API for a 16 kHz mono recording,
/// with the sound server doing the resampling.
final class PulseSource: AudioSource {
    private let stream: OpaquePointer

    init?(device: String?) {
        var error: Int32 = 0
        guard let stream = inkling_pulse_record(device, &error) else { return nil }
        self.stream = stream
    }

    deinit { pa_simple_free(stream) }

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        var error: Int32 = 0
        guard pa_simple_read(stream, buffer.baseAddress, buffer.count * 2, &error) == 0 else { return -1 }
        return buffer.count
    }

    func bufferedSamples() -> Int {
        var error: Int32 = 0
        let microseconds = pa_simple_get_latency(stream, &error)
        return microseconds == UInt64.max
            ? 0 : Int(microseconds / 1_000_000 * 16000 + microseconds % 1_000_000 * 16 / 1000)
    }
}

/// A WAV file (16 kHz mono 16-bit PCM) read instead of the sound server, for tests and the
/// benchmark; paced like a microphone unless `realTime` is false.
final class WAVFileSource: AudioSource {
    private let samples: [Int16]
    private var position = 0
    private let realTime: Bool
    private var started: UInt64 = 0

    enum Problem: Error { case unreadable, notPCM16kMono }

    init(path: String, realTime: Bool) throws(Problem) {
        guard let bytes = WAVFileSource.readAll(path) else { throw .unreadable }
        guard let samples = WAVFileSource.pcmSamples(bytes) else { throw .notPCM16kMono }
        self.samples = samples
        self.realTime = realTime
    }

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        if started == 0 { started = Self.milliseconds() }
        let count = min(buffer.count, samples.count - position)
        guard count > 0 else { return 0 }
        if realTime {
            // Sample `position + count` is heard at start + (position + count) / 16 ms.
            let due = started + UInt64((position + count) / 16)
            let now = Self.milliseconds()
            if due > now { usleep(useconds_t((due - now) * 1000)) }
        }
        for index in 0..<count { buffer[index] = samples[position + index] }
        position += count
        return count
    }

    /// Paced like a microphone: what is due by now and not yet read; unpaced: nothing.
    func bufferedSamples() -> Int {
        guard realTime, started != 0 else { return 0 }
        let due = Int(Self.milliseconds() - started) * 16
        return max(0, min(samples.count, due) - position)
    }

    static func milliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }

    private static func readAll(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > 256 * 1024 * 1024 { return nil }
        }
    }

    /// The samples of a RIFF/WAVE file holding 16 kHz mono 16-bit PCM; nil for anything else.
    static func pcmSamples(_ bytes: [UInt8]) -> [Int16]? {
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else { return nil }
        var offset = 12
        var formatOK = false
        while offset + 8 <= bytes.count {
            let size = u32(offset + 4)
            let body = offset + 8
            if bytes[offset..<offset + 4].elementsEqual("fmt ".utf8) {
                guard body + 16 <= bytes.count else { return nil }
                formatOK = u16(body) == 1 && u16(body + 2) == 1 && u32(body + 4) == 16000 && u16(body + 14) == 16
            } else if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
                guard formatOK else { return nil }
                let end = min(bytes.count, body + size) & ~1
                var samples = [Int16](repeating: 0, count: (end - body) / 2)
                for index in samples.indices {
                    samples[index] = Int16(bitPattern: UInt16(u16(body + 2 * index)))
                }
                return samples
            }
            offset = body + size + (size & 1)
        }
        return nil
    }
}
