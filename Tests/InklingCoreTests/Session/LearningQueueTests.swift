import InklingCore
import Testing

@Suite("Learning queue: words wait for the end of their chunk")
struct LearningQueueTests {
    @Test func wordsBecomeReadyWhenWhitespaceEndsTheirChunk() {
        var queue = LearningQueue()
        queue.reached("hello", after: "I said ")
        #expect(queue.ready.isEmpty)
        queue.inserting(" ", after: "I said hello", learningAllowed: true)
        let ready = queue.takeReady()
        #expect(ready.map(\.word) == ["hello"])
        #expect(ready.first?.before == "I said ")
        #expect(queue.takeReady().isEmpty, "taken once")
    }

    @Test func anAddressIsNeverLearned() {
        var queue = LearningQueue()
        queue.reached("john", after: "")
        queue.reached("@example.com", after: "john")
        queue.inserting(" ", after: "john@example.com", learningAllowed: true)
        #expect(queue.ready.isEmpty)
        #expect(queue.unfinished.isEmpty)
    }

    @Test func nothingIsReadyWhenLearningIsNotAllowed() {
        var queue = LearningQueue()
        queue.reached("hello", after: "")
        queue.inserting(" ", after: "hello", learningAllowed: false)
        #expect(queue.ready.isEmpty && queue.unfinished.isEmpty)
    }

    @Test func droppingForgetsUnfinishedWords() {
        var queue = LearningQueue()
        queue.reached("hello", after: "")
        queue.dropUnfinished()
        queue.inserting(" ", after: "hello", learningAllowed: true)
        #expect(queue.ready.isEmpty)
    }

    @Test func aWordBegunBeforeTheCommitIsLearnedWhole() {
        // `a` passed on behind a BackSpace, `da` composed and committed: the word is `ada`, and
        // `recommend` completed after `r` is `recommend`, not `ecommend`.
        var queue = LearningQueue()
        queue.reached("da", after: "I met a")
        queue.inserting(" ", after: "I met ada", learningAllowed: true)
        queue.reached("ecommend", after: "I met ada r")
        queue.inserting(" ", after: "I met ada recommend", learningAllowed: true)
        let ready = queue.takeReady()
        #expect(ready.map(\.word) == ["ada", "recommend"])
        #expect(ready.map(\.before) == ["I met ", "I met ada "])
    }
}
