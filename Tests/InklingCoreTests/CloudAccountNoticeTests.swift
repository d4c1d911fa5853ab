import InklingCore
import Testing

@Suite struct CloudAccountNoticeTests {
    private func status(_ value: String, id: Int? = nil) -> CloudReply {
        CloudReply.parse("{\"v\":1,\"type\":\"status\",\"status\":\"\(value)\"" + (id.map { ",\"id\":\($0)" } ?? "") + "}")!
    }

    @Test func statusMessagesParse() {
        let reply = status("sign-in-required", id: 4)
        #expect(reply.type == "status" && reply.status == "sign-in-required" && reply.id == 4)
    }

    @Test func theSignInNoticeIsShownOnce() {
        var notice = CloudAccountNotice()
        #expect(notice.received(status("sign-in-required")) == CloudAccountNotice.text)
        // Later checks, or a restarted helper finding the same refused token: nothing more.
        #expect(notice.received(status("sign-in-required")) == nil)
        #expect(notice.received(status("sign-in-required", id: 9)) == nil)
    }

    @Test func aNewSignInEndsTheEpisode() {
        var notice = CloudAccountNotice()
        _ = notice.received(status("sign-in-required"))
        #expect(notice.received(status("signed-in")) == nil)
        #expect(notice.received(status("sign-in-required")) == CloudAccountNotice.text)
    }

    @Test func otherMessagesAndUnknownStatusesShowNothing() {
        var notice = CloudAccountNotice()
        #expect(notice.received(CloudReply(type: "error", id: 1, message: "sign-in required")) == nil)
        #expect(notice.received(status("something-new")) == nil)
        #expect(notice.received(status("sign-in-required")) == CloudAccountNotice.text)
    }

    @Test func theNoticeNamesNoSecretAndFitsTheAuxiliaryText() {
        #expect(CloudAccountNotice.text.unicodeScalars.count < 80)
        #expect(CloudAccountNotice.text.contains("inkling account login"))
    }
}
