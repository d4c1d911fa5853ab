/// Natural logarithm and exponential in pure Swift.
///
/// The standard library has no `log`/`exp` without importing the C library, and InklingCore
/// imports no C. These are accurate to about 1e-15 relative error, which is far more than
/// language-model scores need.
public enum Math {
    static let ln2 = 0.693_147_180_559_945_309_42

    /// The natural logarithm of `x` (−∞ for 0, NaN for negative values).
    public static func log(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        if x == 0 { return -.infinity }
        if x.isInfinite { return .infinity }
        var exponent = Double(x.exponent)
        var mantissa = x.significand  // [1, 2)
        if mantissa > 1.414_213_562_373_095 {
            mantissa /= 2
            exponent += 1
        }
        let s = (mantissa - 1) / (mantissa + 1)
        let s2 = s * s
        var term = s
        var sum = 0.0
        var k = 1.0
        while true {
            let next = sum + term / k
            if next == sum { break }
            sum = next
            term *= s2
            k += 2
        }
        return exponent * ln2 + 2 * sum
    }

    /// e raised to `x`.
    public static func exp(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        if x > 709.78 { return .infinity }
        if x < -745.2 { return 0 }
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        var n = 1.0
        while true {
            term *= r / n
            let next = sum + term
            if next == sum { break }
            sum = next
            n += 1
        }
        // Scale in two steps so that 2^k never overflows on its own.
        let half = Int(k) / 2
        return sum * Double(sign: .plus, exponent: half, significand: 1)
            * Double(sign: .plus, exponent: Int(k) - half, significand: 1)
    }

    /// Single-precision logarithm.
    @inline(__always)
    public static func log(_ x: Float) -> Float { Float(log(Double(x))) }

    /// Single-precision exponential.
    @inline(__always)
    public static func exp(_ x: Float) -> Float { Float(exp(Double(x))) }
}
