import Arguments
import ClubroomResources
import Foundation
import RoomCore

/// A `--role` as a person types it: a role's name or the word the screen shows for it, in any case (`audience` or
/// `listener`, `moderator` or `mod`), checked against the role table the server uses (`rolesFile`, else the
/// built-in one). Returns the role's name, which is what a token or link carries; anything else is a usage error
/// that lists the roles.
func roleArgument(_ word: String, rolesFile: String? = nil) throws -> String {
    let table = try RoleTable.load(
        contentsOf: rolesFile.map { URL(fileURLWithPath: $0) } ?? ClubroomResources.rolesURL)
    guard let role = table.role(named: word) else {
        let known = table.roles.map { $0.label == $0.name.rawValue ? $0.label : "\($0.name.rawValue) (\($0.label))" }
        throw ArgumentError.badValue(
            argument: "--role", value: word, expected: "a role: \(known.joined(separator: ", "))")
    }
    return role.rawValue
}
