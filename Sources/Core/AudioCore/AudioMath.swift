/// Elementary functions in plain Swift, so AudioCore needs neither Foundation nor a C math library and the
/// real-time paths call nothing that might lock or allocate. Accurate to about 1e-12 relative, far beyond what
/// 16-bit audio needs.
public enum AudioMath {
    /// π.
    public static let pi = 3.141_592_653_589_793_238_46
    private static let ln2 = 0.693_147_180_559_945_309_42
    private static let ln10 = 2.302_585_092_994_045_684_02

    /// The natural logarithm of `x`; `-infinity` at zero, NaN below zero.
    public static func log(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        if x == 0 { return -.infinity }
        if x.isInfinite { return .infinity }
        let exponent = Double(x.exponent)
        let mantissa = x.significand
        let s = (mantissa - 1) / (mantissa + 1)
        let s2 = s * s
        var term = s
        var sum = 0.0
        var denominator = 1.0
        for _ in 0..<12 {
            sum += term / denominator
            term *= s2
            denominator += 2
        }
        return 2 * sum + exponent * ln2
    }

    /// The base-10 logarithm of `x`.
    public static func log10(_ x: Double) -> Double {
        log(x) / ln10
    }

    /// e raised to `x`.
    public static func exp(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        if x > 709 { return .infinity }
        if x < -745 { return 0 }
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        for n in 1...18 {
            term *= r / Double(n)
            sum += term
        }
        return scale(sum, byPowerOfTwo: Int(k))
    }

    /// 10 raised to `x`.
    public static func pow10(_ x: Double) -> Double {
        exp(x * ln10)
    }

    /// The sine of `x` radians.
    public static func sin(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        let twoPi = 2 * pi
        var reduced = x - (x / twoPi).rounded() * twoPi
        if reduced > pi / 2 {
            reduced = pi - reduced
        } else if reduced < -pi / 2 {
            reduced = -pi - reduced
        }
        let square = reduced * reduced
        var term = reduced
        var sum = reduced
        var n = 1.0
        for _ in 0..<11 {
            term *= -square / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }

    /// The cosine of `x` radians.
    public static func cos(_ x: Double) -> Double {
        sin(x + pi / 2)
    }

    private static func scale(_ value: Double, byPowerOfTwo power: Int) -> Double {
        var result = value
        var remaining = power
        while remaining > 1000 {
            result *= Double(sign: .plus, exponent: 1000, significand: 1)
            remaining -= 1000
        }
        while remaining < -1000 {
            result *= Double(sign: .plus, exponent: -1000, significand: 1)
            remaining += 1000
        }
        return result * Double(sign: .plus, exponent: remaining, significand: 1)
    }
}
