import InklingCore
import Testing

@Suite struct EngineRestartPolicyTests {
    let segv: Int32 = 11
    let kill: Int32 = 9

    @Test func theFirstCrashIsAnsweredByAnImmediateRestart() {
        var policy = EngineRestartPolicy()
        #expect(
            policy.engineEnded(.killedBySignal(segv), stopRequested: false, now: 1_000)
                == .restart(afterMilliseconds: 0))
    }

    @Test func furtherCrashesWaitLongerAndACrashLoopGivesUp() {
        var policy = EngineRestartPolicy()
        var decisions: [EngineRestartPolicy.Decision] = []
        for second in 0..<7 {
            decisions.append(
                policy.engineEnded(.killedBySignal(kill), stopRequested: false, now: Int64(second) * 1_000))
        }
        #expect(
            decisions == [
                .restart(afterMilliseconds: 0), .restart(afterMilliseconds: 500), .restart(afterMilliseconds: 1_000),
                .restart(afterMilliseconds: 2_000), .restart(afterMilliseconds: 4_000), .giveUp(status: 137),
                .giveUp(status: 137),
            ])
    }

    @Test func crashesOutsideTheWindowNoLongerCount() {
        var policy = EngineRestartPolicy()
        for minute in 0..<20 {
            // One crash every minute is not a loop: each is the first within the window.
            let decision = policy.engineEnded(.killedBySignal(segv), stopRequested: false, now: Int64(minute) * 60_000)
            #expect(decision == .restart(afterMilliseconds: 0))
        }
    }

    @Test func theDelayIsCapped() {
        var policy = EngineRestartPolicy()
        policy.maximumCrashes = 100
        var last = EngineRestartPolicy.Decision.exit(status: 0)
        for step in 0..<50 { last = policy.engineEnded(.killedBySignal(segv), stopRequested: false, now: Int64(step)) }
        #expect(last == .restart(afterMilliseconds: policy.maximumDelay))
    }

    @Test func anEngineThatExitsByItselfIsNotRestarted() {
        var policy = EngineRestartPolicy()
        #expect(policy.engineEnded(.exited(status: 0), stopRequested: false, now: 0) == .exit(status: 0))
        #expect(policy.engineEnded(.exited(status: 1), stopRequested: false, now: 0) == .exit(status: 1))
    }

    @Test func aTerminationSignalTheEngineCouldNotHandleYetIsNotACrash() {
        // SIGTERM, SIGINT or SIGHUP before the engine installed its handlers (at start-up).
        for signal: Int32 in [1, 2, 15] {
            var policy = EngineRestartPolicy()
            #expect(
                policy.engineEnded(.killedBySignal(signal), stopRequested: false, now: 0) == .exit(status: 128 + signal)
            )
        }
    }

    @Test func anEngineAskedToStopIsNotRestartedWhateverItsEnd() {
        var policy = EngineRestartPolicy()
        #expect(policy.engineEnded(.exited(status: 0), stopRequested: true, now: 0) == .exit(status: 0))
        #expect(policy.engineEnded(.killedBySignal(15), stopRequested: true, now: 0) == .exit(status: 143))
        #expect(policy.engineEnded(.killedBySignal(segv), stopRequested: true, now: 0) == .exit(status: 139))
    }

    @Test func aClockGoingBackwardsDoesNotCountOldCrashes() {
        var policy = EngineRestartPolicy()
        _ = policy.engineEnded(.killedBySignal(segv), stopRequested: false, now: 500_000)
        #expect(
            policy.engineEnded(.killedBySignal(segv), stopRequested: false, now: 10) == .restart(afterMilliseconds: 0))
    }
}
