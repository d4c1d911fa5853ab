import Glibc

/// Milliseconds on a monotonic clock; injectable so time-dependent logic can be tested.
public protocol MonotonicClock: Sendable {
    func milliseconds() -> UInt64
}

public struct SystemClock: MonotonicClock {
    public init() {}
    public func milliseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }
}
