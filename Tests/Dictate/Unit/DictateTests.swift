import InklingCommandLine
import InklingCore
import Testing

@testable import InklingDictate

@Suite struct DictateHelperTests {
    static func wav(rate: Int = 16000, channels: Int = 1, bits: Int = 16, samples: [Int16]) -> [UInt8] {
        func le32(_ v: Int) -> [UInt8] {
            [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
        }
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        var data: [UInt8] = []
        for s in samples { data += le16(Int(UInt16(bitPattern: s))) }
        var fmt =
            le16(1) + le16(channels) + le32(rate) + le32(rate * channels * bits / 8) + le16(channels * bits / 8)
            + le16(bits)
        fmt = Array("fmt ".utf8) + le32(fmt.count) + fmt
        // A LIST chunk before data, as sox writes, must be skipped.
        let list = Array("LIST".utf8) + le32(3) + [1, 2, 3, 0]
        let body = Array("WAVE".utf8) + fmt + list + Array("data".utf8) + le32(data.count) + data
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    @Test func readsSixteenKilohertzMonoPCM() {
        #expect(WAVFileSource.pcmSamples(Self.wav(samples: [1, -2, 300, -32768])) == [1, -2, 300, -32768])
    }

    @Test func refusesOtherFormats() {
        #expect(WAVFileSource.pcmSamples(Self.wav(rate: 44100, samples: [1])) == nil)
        #expect(WAVFileSource.pcmSamples(Self.wav(channels: 2, samples: [1, 2])) == nil)
        #expect(WAVFileSource.pcmSamples(Array("RIFF....WAVE".utf8)) == nil)
        #expect(WAVFileSource.pcmSamples([]) == nil)
    }

    @Test func levelIsZeroForSilenceAndHighForLoudSound() {
        #expect(Service.level(ArraySlice([Int16](repeating: 0, count: 100))) == 0)
        // Half of full scale is -6 dB: 0.9 on the -60…0 dB meter.
        #expect(Service.level(ArraySlice([Int16](repeating: 16000, count: 100))) == 0.9)
        // 100 of 32768 is about -50 dB.
        let quiet = Service.level(ArraySlice([Int16](repeating: 100, count: 100)))
        #expect(quiet > 0 && quiet < 0.3)
    }

    @Test func hypothesesAreCleanedOfFillersAndControls() {
        #expect(Service.clean("<s> hello  [noise] world </s>") == "hello world")
        #expect(Service.clean("bad\u{1B}[31m") == "")
        #expect(
            Service.clean(String(repeating: "a ", count: 2000)).unicodeScalars.count
                <= DictationProtocol.maximumTextScalars)
    }

    @Test func optionsNeedAnAudioFileForFast() throws {
        #expect(throws: UsageError.self) { try Options.parse(["--fast"]) }
        let options = try Options.parse(["--audio-file", "/tmp/x.wav", "--fast"])
        #expect(options.audioFile == "/tmp/x.wav" && options.fast)
        #expect(try Options.parse([]).model == RecognizerModel.debianEnglish)
    }

    @Test func malformedRequestsAreIgnored() {
        let service = Service(options: Options(), output: Output())
        #expect(service.handle(line: Array("not json".utf8)) == .handled)
        #expect(service.handle(line: Array(#"{"v":2,"type":"shutdown"}"#.utf8)) == .handled)
        #expect(service.handle(line: Array(#"{"v":1,"type":"shutdown"}"#.utf8)) == .shutdown)
    }
}
