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

    /// The folder of the demo's speech clips, `Resources/clips`: 16 kHz mono 16-bit WAV files and
    /// `manifest.json`, which names each clip's speaker, voice, kind, duration and words.
    public static var clipsDirectory: URL {
        guard let url = Bundle.module.url(forResource: "clips", withExtension: nil) else {
            fatalError("the Clubroom resource bundle has no clips folder; the build is incomplete")
        }
        return url
    }

    /// The demo clips' `manifest.json`.
    public static var clipManifestURL: URL {
        clipsDirectory.appendingPathComponent("manifest.json")
    }
}
