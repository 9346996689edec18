/// A rectangle of cells. Sizes are never negative; every operation clamps instead of trapping.
public struct Rect: Hashable, Sendable, CustomStringConvertible {
    /// The left column.
    public var x: Int
    /// The top row.
    public var y: Int
    /// Columns.
    public var width: Int
    /// Rows.
    public var height: Int

    /// Creates a rectangle; negative sizes become zero.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = max(0, width)
        self.height = max(0, height)
    }

    /// A rectangle at the origin.
    public init(width: Int, height: Int) {
        self.init(x: 0, y: 0, width: width, height: height)
    }

    /// True when the rectangle holds no cell.
    public var isEmpty: Bool { width == 0 || height == 0 }
    /// One past the right column.
    public var right: Int { x + width }
    /// One past the bottom row.
    public var bottom: Int { y + height }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    /// The rectangle shrunk by `horizontal` columns on each side and `vertical` rows at top and bottom.
    public func inset(horizontal: Int = 0, vertical: Int = 0) -> Rect {
        let dx = min(max(0, horizontal), width / 2)
        let dy = min(max(0, vertical), height / 2)
        return Rect(x: x + dx, y: y + dy, width: width - 2 * dx, height: height - 2 * dy)
    }

    /// The part of this rectangle that is also in `other` (empty when they do not meet).
    public func intersection(_ other: Rect) -> Rect {
        let left = max(x, other.x)
        let top = max(y, other.y)
        let right = min(self.right, other.right)
        let bottom = min(self.bottom, other.bottom)
        guard right > left, bottom > top else { return Rect(x: left, y: top, width: 0, height: 0) }
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// Row `index` of the rectangle as a one-row rectangle (empty when out of range).
    public func row(_ index: Int) -> Rect {
        guard index >= 0, index < height else { return Rect(x: x, y: y + max(0, index), width: width, height: 0) }
        return Rect(x: x, y: y + index, width: width, height: 1)
    }

    /// A rectangle of at most `width`x`height` centred in this one.
    public func centered(width: Int, height: Int) -> Rect {
        let w = min(max(0, width), self.width)
        let h = min(max(0, height), self.height)
        return Rect(x: x + (self.width - w) / 2, y: y + (self.height - h) / 2, width: w, height: h)
    }

    /// Splits the rectangle into rows, top to bottom, by `constraints`.
    public func splitRows(_ constraints: [Constraint]) -> [Rect] {
        var top = y
        return Constraint.solve(constraints, total: height).map { size in
            defer { top += size }
            return Rect(x: x, y: top, width: width, height: size)
        }
    }

    /// Splits the rectangle into columns, left to right, by `constraints`.
    public func splitColumns(_ constraints: [Constraint]) -> [Rect] {
        var left = x
        return Constraint.solve(constraints, total: width).map { size in
            defer { left += size }
            return Rect(x: left, y: y, width: size, height: height)
        }
    }
}

/// How much of a split one part asks for.
public enum Constraint: Hashable, Sendable {
    /// Exactly this many cells, or what is left when less.
    case length(Int)
    /// At least this many cells, and a share of what is left over like `fill(1)`.
    case min(Int)
    /// This percentage of the whole.
    case percentage(Int)
    /// A share of what is left after the others, in proportion to the weight.
    case fill(Int)

    /// Sizes for `constraints` in `total` cells: fixed parts first, in order, then the rest by weight.
    /// The sizes never add up to more than `total`.
    static func solve(_ constraints: [Constraint], total: Int) -> [Int] {
        var remaining = Swift.max(0, total)
        var sizes = [Int](repeating: 0, count: constraints.count)
        var weights = [Int](repeating: 0, count: constraints.count)
        for (index, constraint) in constraints.enumerated() {
            let wanted: Int
            switch constraint {
            case .length(let n): wanted = n
            case .min(let n):
                wanted = n
                weights[index] = 1
            case .percentage(let p): wanted = Swift.max(0, total) * Swift.max(0, p) / 100
            case .fill(let weight):
                wanted = 0
                weights[index] = Swift.max(0, weight)
            }
            let given = Swift.min(Swift.max(0, wanted), remaining)
            sizes[index] = given
            remaining -= given
        }
        let totalWeight = weights.reduce(0, +)
        guard totalWeight > 0, remaining > 0 else { return sizes }
        let share = remaining
        var handedOut = 0
        var lastWeighted = 0
        for index in sizes.indices where weights[index] > 0 {
            let extra = share * weights[index] / totalWeight
            sizes[index] += extra
            handedOut += extra
            lastWeighted = index
        }
        sizes[lastWeighted] += share - handedOut
        return sizes
    }
}
