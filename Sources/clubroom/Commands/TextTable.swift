import Foundation
import TermUI

/// The tables the operator's commands print (`rooms`, `links`, `bans`): columns as wide as their widest cell as a
/// terminal shows it, two spaces apart, the last column as it is; each row a line.
enum TextTable {
    /// The rows, the first being the heading, as lines; the columns in `rightAligned` line up on the right.
    static func text(_ rows: [[String]], rightAligned: Set<Int> = []) -> String {
        guard let heading = rows.first else { return "" }
        let widths = heading.indices.map { column in rows.map { DisplayWidth.of($0[column]) }.max() ?? 0 }
        return rows.map { cells in
            cells.enumerated().map { column, cell in
                if column == cells.count - 1 { return cell }
                let pad = String(repeating: " ", count: widths[column] - DisplayWidth.of(cell))
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// A time in seconds since the Unix epoch as the tables write it, in UTC: "2026-12-06 05:31:02".
    static func utc(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
