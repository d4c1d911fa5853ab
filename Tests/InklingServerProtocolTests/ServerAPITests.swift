import InklingCore
import InklingServerProtocol
import Testing

@Suite struct ServerAPITests {
    @Test func deviceCreateRequestUsesSnakeCaseKeys() throws {
        let body = ServerJSON.encode(DeviceCreateRequest(username: "ann", password: "pw", deviceName: "laptop"))
        #expect(String(decoding: body, as: UTF8.self) == #"{"device_name":"laptop","password":"pw","username":"ann"}"#)
        #expect(ServerJSON.decode(DeviceCreateRequest.self, from: body)?.deviceName == "laptop")
    }

    @Test func rotateAnswerRoundTrips() {
        let answer = DeviceRotateAnswer(token: "ink_x", deviceID: 3, expiresAt: 100, oldTokenValidUntil: 50)
        let text = String(decoding: ServerJSON.encode(answer), as: UTF8.self)
        #expect(text == #"{"device_id":3,"expires_at":100,"old_token_valid_until":50,"token":"ink_x"}"#)
        #expect(ServerJSON.decode(DeviceRotateAnswer.self, from: Array(text.utf8)) == answer)
    }

    @Test func checkRequestIsThePipeRequestWithoutEnvelope() {
        let pipe = CloudCheckRequest(id: 9, sentence: "I saw teh cat.", language: "en", flags: [CloudFlag(start: 6, end: 9, word: "teh", replacements: ["the"])])
        let check = CheckRequest(pipe)
        let text = String(decoding: ServerJSON.encode(check), as: UTF8.self)
        #expect(!text.contains("\"id\"") && !text.contains("\"type\"") && !text.contains("\"v\""))
        #expect(check.cloudRequest(id: 9) == pipe)
    }

    @Test func checkAnswerHasTheModelOutputShape() {
        let answer = CheckAnswer(verdicts: [CloudVerdict(start: 6, end: 9, verdict: "agree")], fixes: [])
        let text = String(decoding: ServerJSON.encode(answer), as: UTF8.self)
        #expect(text == #"{"fixes":[],"verdicts":[{"end":9,"start":6,"verdict":"agree"}]}"#)
        #expect(answer.cloudReply(id: 4).id == 4)
    }

    @Test func tokenShape() {
        #expect(ServerAPI.isWellFormedToken("ink_" + String(repeating: "A", count: 43)))
        #expect(!ServerAPI.isWellFormedToken("ink_" + String(repeating: "A", count: 42)))
        #expect(!ServerAPI.isWellFormedToken("ink_" + String(repeating: "A", count: 42) + "="))
        #expect(!ServerAPI.isWellFormedToken("xyz_" + String(repeating: "A", count: 43)))
        #expect(!ServerAPI.isWellFormedToken("ink_" + String(repeating: "A", count: 42) + "'"))
    }
}
