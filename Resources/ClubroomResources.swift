import Foundation

/// Files that ship with Clubroom: the default role table and the demo's speech clips.
public enum ClubroomResources {
    /// The default role table, `Resources/roles.json`.
    public static var rolesURL: URL {
        guard let url = Bundle.module.url(forResource: "roles", withExtension: "json") else {
            fatalError("the Clubroom resource bundle has no roles.json; the build is incomplete")
        }
        return url
    }
}
