import Foundation

/// The result of one benchmark: rows of named figures, each optionally checked against a target.
/// Shared by every Clubroom benchmark so `clubroom bench ...` prints them all the same way.
public struct BenchmarkReport: Sendable, Equatable, Codable {
    /// Which way a figure must fall to meet its target.
    public enum Goal: String, Sendable, Equatable, Codable {
        /// Lower is better: times, latencies, losses.
        case atMost = "at_most"
        /// Higher is better: rates, scores.
        case atLeast = "at_least"
    }

    /// One measured figure.
    public struct Row: Sendable, Equatable, Codable {
        public var metric: String
        public var value: Double
        public var unit: String
        public var target: Double?
        public var goal: Goal?

        /// A figure; give a `target` to have it checked (lower is better unless `goal` says otherwise).
        public init(_ metric: String, _ value: Double, _ unit: String, target: Double? = nil, goal: Goal = .atMost) {
            self.metric = metric
            self.value = value
            self.unit = unit
            self.target = target
            self.goal = target == nil ? nil : goal
        }

        /// Whether the figure meets its target; `nil` when it has none.
        public var pass: Bool? {
            guard let target, let goal else { return nil }
            return goal == .atMost ? value <= target : value >= target
        }

        private enum CodingKeys: String, CodingKey {
            case metric, value, unit, target, goal, pass
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            metric = try c.decode(String.self, forKey: .metric)
            value = try c.decode(Double.self, forKey: .value)
            unit = try c.decode(String.self, forKey: .unit)
            target = try c.decodeIfPresent(Double.self, forKey: .target)
            goal = try c.decodeIfPresent(Goal.self, forKey: .goal)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(metric, forKey: .metric)
            try c.encode(BenchmarkReport.rounded(value), forKey: .value)
            try c.encode(unit, forKey: .unit)
            try c.encodeIfPresent(target, forKey: .target)
            try c.encodeIfPresent(goal, forKey: .goal)
            try c.encodeIfPresent(pass, forKey: .pass)
        }
    }

    public var name: String
    public var rows: [Row]
    /// How the figures were taken: build configuration, repetitions, sizes.
    public var notes: [String]

    public init(name: String, rows: [Row] = [], notes: [String] = []) {
        self.name = name
        self.rows = rows
        self.notes = notes
    }

    /// False when any row misses its target.
    public var allPassed: Bool { rows.allSatisfy { $0.pass != false } }

    /// A plain table for a terminal: metric, value, unit, target, and ok / MISS.
    public func tableText() -> String {
        let header = ["metric", "value", "unit", "target", "result"]
        let cells = rows.map { row -> [String] in
            let target = row.target.map { (row.goal == .atLeast ? "≥ " : "≤ ") + Self.format($0) } ?? ""
            let result = row.pass.map { $0 ? "ok" : "MISS" } ?? ""
            return [row.metric, Self.format(row.value), row.unit, target, result]
        }
        let widths = header.indices.map { column in
            ([header] + cells).map { $0[column].count }.max() ?? 0
        }
        func line(_ fields: [String]) -> String {
            fields.enumerated().map { column, text in
                // Numbers line up on the right, words on the left.
                let pad = String(repeating: " ", count: widths[column] - text.count)
                return column == 1 ? pad + text : text + pad
            }
            .joined(separator: "  ").trimmingTrailingSpaces()
        }
        var lines = [name, line(header), line(widths.map { String(repeating: "-", count: $0) })]
        lines += cells.map(line)
        lines += notes.map { "  " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as pretty-printed JSON with sorted keys, ending in a newline.
    public func jsonText() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self), let text = String(data: data, encoding: .utf8) else {
            return "{}\n"
        }
        return text + "\n"
    }

    /// Three significant decimals are plenty for timings and keep the JSON readable.
    static func rounded(_ value: Double) -> Double {
        guard value.isFinite else { return 0 }
        return (value * 1000).rounded() / 1000
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: abs(value) >= 100 ? "%.1f" : "%.3f", value)
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
