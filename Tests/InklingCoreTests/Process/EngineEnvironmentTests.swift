import InklingCore
import Testing

@Suite struct EngineEnvironmentTests {
    @Test func theSupervisorSwitchesOffTheBacktracerThatCouldPrintTypedText() {
        let environment = EngineEnvironment.forEngine(
            inheriting: ["HOME=/home/u", "SWIFT_BACKTRACE=enable=yes,interactive=no"], supervisorProcessID: 42,
            recovering: false)
        #expect(environment.filter { $0.hasPrefix("SWIFT_BACKTRACE=") } == ["SWIFT_BACKTRACE=enable=no"])
        #expect(environment.contains("HOME=/home/u"))
    }

    @Test func supervisionVariablesAreReplacedNotDuplicated() {
        let environment = EngineEnvironment.forEngine(
            inheriting: ["INKLING_SUPERVISOR_PID=7", "INKLING_ENGINE_RECOVERING=1", "INKLING_SUPERVISOR_PIDX=keep"],
            supervisorProcessID: 42, recovering: false)
        #expect(environment.filter { $0.hasPrefix("INKLING_SUPERVISOR_PID=") } == ["INKLING_SUPERVISOR_PID=42"])
        #expect(!environment.contains { $0.hasPrefix("INKLING_ENGINE_RECOVERING=") })
        #expect(environment.contains("INKLING_SUPERVISOR_PIDX=keep"))
    }

    @Test func aRestartedEngineIsToldItIsRecovering() {
        let environment = EngineEnvironment.forEngine(inheriting: [], supervisorProcessID: 1, recovering: true)
        #expect(environment.contains("INKLING_ENGINE_RECOVERING=1"))
    }
}
