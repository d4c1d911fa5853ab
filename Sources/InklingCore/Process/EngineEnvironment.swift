/// The environment the supervisor gives each engine it starts.
public enum EngineEnvironment {
    /// Set to the supervisor's process id in a supervised engine.
    public static let supervisorVariable = "INKLING_SUPERVISOR_PID"
    /// Set to 1 in an engine started after a crash, so it takes the focused field back.
    public static let recoveringVariable = "INKLING_ENGINE_RECOVERING"
    /// Swift's crash backtracer prints registers and nearby memory, which can hold the preedit
    /// or surrounding text; an engine never prints typed text, so it is switched off.
    public static let backtraceSetting = "SWIFT_BACKTRACE=enable=no"

    /// The inherited `NAME=value` entries with Inkling's own supervision variables and any
    /// backtrace setting replaced by the supervisor's.
    public static func forEngine(inheriting inherited: [String], supervisorProcessID: Int32, recovering: Bool)
        -> [String]
    {
        let replaced = [supervisorVariable, recoveringVariable, "SWIFT_BACKTRACE"]
        var environment = inherited.filter { entry in
            let name =
                entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
                ?? entry
            return !replaced.contains(name)
        }
        environment.append("\(supervisorVariable)=\(supervisorProcessID)")
        if recovering { environment.append("\(recoveringVariable)=1") }
        environment.append(backtraceSetting)
        return environment
    }
}
