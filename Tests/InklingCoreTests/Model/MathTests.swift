import InklingTestSupport
import Testing

@testable import InklingCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The C library's functions, as the reference.
private func libmLog(_ x: Double) -> Double { log(x) }
private func libmExp(_ x: Double) -> Double { exp(x) }

/// `Math.log`/`Math.exp` replace the C library in InklingCore; the tests compare them with it.
@Suite("Math")
struct MathTests {
    static func relativeError(_ value: Double, _ reference: Double) -> Double {
        if value == reference { return 0 }
        return abs(value - reference) / max(abs(reference), Double.leastNormalMagnitude)
    }

    @Test func knownValues() {
        #expect(Math.log(1.0) == 0)
        #expect(Math.exp(0.0) == 1)
        #expect(Self.relativeError(Math.log(2.0), 0.693_147_180_559_945_309_42) < 1e-15)
        #expect(Self.relativeError(Math.log(10.0), 2.302_585_092_994_045_684_02) < 1e-15)
        #expect(Self.relativeError(Math.exp(1.0), 2.718_281_828_459_045_235_36) < 1e-15)
        #expect(Self.relativeError(Math.exp(-1.0), 0.367_879_441_171_442_321_60) < 1e-15)
        #expect(Self.relativeError(Math.log(2.718_281_828_459_045), 1) < 1e-15)
        #expect(Self.relativeError(Math.log(0.5), -0.693_147_180_559_945_309_42) < 1e-15)
        #expect(Self.relativeError(Math.exp(10.0), 22026.465_794_806_716_517) < 1e-14)
    }

    @Test func specialValues() {
        #expect(Math.log(0.0) == -.infinity)
        #expect(Math.log(-0.0) == -.infinity)
        #expect(Math.log(-1.0).isNaN)
        #expect(Math.log(Double.nan).isNaN)
        #expect(Math.log(Double.infinity) == .infinity)
        #expect(Math.exp(Double.nan).isNaN)
        #expect(Math.exp(Double.infinity) == .infinity)
        #expect(Math.exp(-Double.infinity) == 0)
        #expect(Math.exp(1000.0) == .infinity)
        #expect(Math.exp(-1000.0) == 0)
        #expect(Math.exp(709.0).isFinite)
        #expect(Math.exp(-740.0) > 0)  // subnormal, not flushed to zero
    }

    @Test("log matches libm to 1e-12 over 600 decades and the subnormal range")
    func logAgainstLibm() {
        var rng = SplitMix64(seed: 1)
        var worst = 0.0
        for _ in 0..<20_000 {
            // Random significand and exponent: every binade from 2^-1070 to 2^1000.
            let x = Double(
                sign: .plus, exponent: Int.random(in: -1070...1000, using: &rng),
                significand: Double.random(in: 1..<2, using: &rng))
            let reference = libmLog(x)
            let error = abs(Math.log(x) - reference) / max(abs(reference), 1e-300)
            worst = max(worst, error)
            if abs(reference) > 1e-3 { #expect(error < 1e-12, "log(\(x))") }
        }
        // Near 1 the logarithm is tiny: compare absolute error relative to |x − 1|.
        for _ in 0..<5_000 {
            let x = 1 + Double.random(in: -0.3...0.3, using: &rng)
            let reference = libmLog(x)
            #expect(abs(Math.log(x) - reference) <= 1e-12 * max(abs(reference), 1e-300), "log(\(x))")
        }
        #expect(worst < 1e-12)
    }

    @Test("exp matches libm to 1e-12 over its whole finite range")
    func expAgainstLibm() {
        var rng = SplitMix64(seed: 2)
        for _ in 0..<20_000 {
            let x = Double.random(in: -708...709, using: &rng)
            let reference = libmExp(x)
            #expect(Self.relativeError(Math.exp(x), reference) < 1e-12, "exp(\(x))")
        }
        for _ in 0..<2_000 {
            let x = Double.random(in: -1e-6...1e-6, using: &rng)
            #expect(Self.relativeError(Math.exp(x), libmExp(x)) < 1e-15, "exp(\(x))")
        }
    }

    @Test("identities: exp(log x) = x, log(ab) = log a + log b, exp(a+b) = exp a · exp b")
    func identities() {
        var rng = SplitMix64(seed: 3)
        for _ in 0..<10_000 {
            let x = Double.random(in: 1e-200...1e200, using: &rng) * Double.random(in: 0..<1, using: &rng) + 1e-300
            #expect(Self.relativeError(Math.exp(Math.log(x)), x) < 1e-12, "x = \(x)")
            let a = Double.random(in: 1e-5...1e5, using: &rng)
            let b = Double.random(in: 1e-5...1e5, using: &rng)
            #expect(abs(Math.log(a * b) - (Math.log(a) + Math.log(b))) < 1e-12 * max(1, abs(Math.log(a * b))))
            let u = Double.random(in: -300...300, using: &rng)
            let v = Double.random(in: -300...300, using: &rng)
            #expect(Self.relativeError(Math.exp(u + v), Math.exp(u) * Math.exp(v)) < 1e-12)
        }
        // Powers of two are exact.
        for k in -1000...1000 {
            let x = Double(sign: .plus, exponent: k, significand: 1)
            #expect(Self.relativeError(Math.log(x), Double(k) * 0.693_147_180_559_945_309_42) < 1e-15, "2^\(k)")
        }
    }

    @Test func monotonic() {
        var previous = -Double.infinity
        for i in 1...10_000 {
            let value = Math.log(Double(i) / 100)
            #expect(value > previous)
            previous = value
        }
        previous = 0
        for i in -7000...7000 {
            let value = Math.exp(Double(i) / 10)
            #expect(value > previous)
            previous = value
        }
    }

    @Test func singlePrecisionWrappers() {
        #expect(abs(Math.log(Float(2)) - 0.693_147_2) < 1e-6)
        #expect(abs(Math.exp(Float(1)) - 2.718_281_8) < 1e-6)
        #expect(Math.log(Float(0)) == -.infinity)
        #expect(Math.exp(Float(-200)) == 0)
    }
}
