import FoundationEssentials
import InklingCore
import Testing

private func check(_ id: Int, _ sentence: String = "I saw teh cat.") -> CloudRequestMessage {
    .check(CloudCheckRequest(id: id, sentence: sentence, language: "en", flags: []))
}

private func globalID(_ message: CloudRequestMessage?) -> Int? {
    switch message {
    case .check(let request): return request.id
    case .cancel(let id): return id
    default: return nil
    }
}

private func resultLine(id: Int) -> String {
    CloudLine.encode(CloudReply(type: "result", id: id, verdicts: []))
}

@Suite("Cloud router: ids between sessions and the helper")
struct CloudRouterTests {
    @Test func twoClientsWithTheSameLocalIDGetDistinctIDsAndTheirOwnRepliesBack() throws {
        var router = CloudRouter()
        let first = try #require(globalID(router.outgoing([check(1)], from: 10).first))
        let second = try #require(globalID(router.outgoing([check(1, "Its fine.")], from: 20).first))
        #expect(first != second)
        #expect(router.waitingClients == [10, 20])
        #expect(
            router.incoming(resultLine(id: second))
                == .reply(CloudReply(type: "result", id: 1, verdicts: []), client: 20))
        #expect(
            router.incoming(resultLine(id: first))
                == .reply(CloudReply(type: "result", id: 1, verdicts: []), client: 10))
        #expect(!router.hasRequestsOut)
    }

    @Test func aReplyIsDeliveredOnceAndUnknownIDsAreIgnored() throws {
        var router = CloudRouter()
        let global = try #require(globalID(router.outgoing([check(4)], from: 10).first))
        #expect(router.incoming(resultLine(id: global + 100)) == .ignored)
        #expect(router.incoming(resultLine(id: global)) != .ignored)
        #expect(router.incoming(resultLine(id: global)) == .ignored, "the route was used up")
    }

    @Test func garbageAndGreetingsAreIgnored() {
        var router = CloudRouter()
        _ = router.outgoing([check(1)], from: 10)
        let lines = [
            "", "not json", "{\"v\":2,\"type\":\"result\",\"id\":1}", String(repeating: "x", count: 70_000),
            "{\"v\":1}",
            "{\"v\":1,\"type\":\"hello\",\"id\":1}", "{\"v\":1,\"type\":\"whatever\",\"id\":1}",
        ]
        for line in lines { #expect(router.incoming(line) == .ignored) }
        #expect(router.hasRequestsOut, "nothing above answered the request")
    }

    @Test func aCancelIsRenumberedAndForgetsTheRoute() throws {
        var router = CloudRouter()
        _ = router.outgoing([check(1)], from: 10)
        let global = try #require(globalID(router.outgoing([check(1)], from: 20).first))
        #expect(router.outgoing([.cancel(id: 1)], from: 20) == [.cancel(id: global)])
        #expect(router.waitingClients == [10])
        #expect(router.incoming(resultLine(id: global)) == .ignored, "a late answer to a cancelled request")
        #expect(router.outgoing([.cancel(id: 1)], from: 20).isEmpty, "nothing left to cancel")
        #expect(router.outgoing([.cancel(id: 9)], from: 10).isEmpty, "another id of the same client")
    }

    @Test func anAccountStatusGoesToTheClientWhoseCheckFoundOutElseTheLatestRequester() throws {
        var router = CloudRouter()
        let first = try #require(globalID(router.outgoing([check(1)], from: 10).first))
        _ = router.outgoing([check(1)], from: 20)
        let routed = CloudReply(type: "status", id: first, status: "signed-out")
        #expect(router.incoming(CloudLine.encode(routed)) == .accountStatus(routed, client: 10))
        #expect(router.waitingClients == [10, 20], "a status does not use up the route")
        let unrouted = CloudReply(type: "status", id: nil, status: "signed-out")
        #expect(router.incoming(CloudLine.encode(unrouted)) == .accountStatus(unrouted, client: 20))
        #expect(CloudRouter().lastRequester == nil)
    }

    @Test func forgettingAClientOrEveryoneDropsTheirRoutes() throws {
        var router = CloudRouter()
        let first = try #require(globalID(router.outgoing([check(1)], from: 10).first))
        let second = try #require(globalID(router.outgoing([check(2)], from: 20).first))
        router.forget(client: 10)
        #expect(router.incoming(resultLine(id: first)) == .ignored)
        _ = router.outgoing([check(3)], from: 30)
        #expect(router.forgetAll() == [20, 30])
        #expect(router.incoming(resultLine(id: second)) == .ignored)
        #expect(!router.hasRequestsOut)
    }

    @Test func messagesBecomeTheProtocolsLines() throws {
        let request = CloudCheckRequest(id: 3, sentence: "Line \"quoted\"\nnext", language: "en", flags: [])
        let line = CloudRequestMessage.check(request).line
        #expect(line.hasSuffix("\n") && !line.dropLast().contains("\n"))
        #expect(try JSONDecoder().decode(CloudCheckRequest.self, from: Data(line.utf8)) == request)
        #expect(
            CloudRequestMessage.cancel(id: 5).line == "{\"id\":5,\"type\":\"cancel\",\"v\":\(CloudProtocol.version)}\n")
        #expect(CloudRequestMessage.shutdown.line == CloudLine.shutdown)
    }
}
