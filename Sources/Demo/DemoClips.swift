import Foundation
import Platform
import RoomCore

/// One speech clip of the demo, as `Resources/clips/manifest.json` describes it.
public struct DemoClip: Sendable, Equatable, Decodable {
    /// What the clip is for.
    public enum Kind: String, Sendable, Equatable, Decodable {
        /// A line of the stage conversation; the manifest lists them in the order they are said.
        case talk
        /// The line a listener says once after being invited on stage.
        case invited
        /// The moderator's welcome when the room opens.
        case opening
        /// The moderator greeting someone who has just come on stage.
        case guest
    }

    /// The WAV file's name inside the clips folder.
    public var file: String
    /// The identity of the cast member who says it.
    public var speaker: String
    /// The espeak-ng voice it was made with.
    public var voice: String
    public var kind: Kind
    /// Length in seconds.
    public var duration: Double
    /// The words, for subtitles.
    public var text: String
}

/// The demo's clips: where they are and what `manifest.json` says about them.
public struct DemoClipLibrary: Sendable, Equatable {
    /// The folder holding the WAV files.
    public var directory: URL
    /// Every clip, in manifest order.
    public var clips: [DemoClip]

    /// Reads `manifest.json` in `directory` and checks that every clip it names is there.
    public static func load(directory: URL) throws(DemoError) -> DemoClipLibrary {
        let manifest = directory.appendingPathComponent("manifest.json")
        guard let data = FileManager.default.contents(atPath: manifest.path) else {
            throw DemoError(place: manifest.path, problem: "cannot be read")
        }
        let clips: [DemoClip]
        do {
            clips = try JSONDecoder().decode([DemoClip].self, from: data)
        } catch {
            throw DemoError(place: manifest.path, problem: "is not a clip manifest (\(error))")
        }
        for clip in clips {
            let path = directory.appendingPathComponent(clip.file).path
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw DemoError(place: manifest.path, problem: "names \(clip.file), which is missing")
            }
            guard clip.duration > 0 else {
                throw DemoError(place: manifest.path, problem: "gives \(clip.file) a duration of \(clip.duration) s")
            }
        }
        return DemoClipLibrary(directory: directory, clips: clips)
    }

    /// The conversation's lines, in order.
    public var conversation: [DemoClip] { clips.filter { $0.kind == .talk } }

    /// The first clip of `kind` said by `speaker`.
    public func clip(_ kind: DemoClip.Kind, by speaker: String) -> DemoClip? {
        clips.first { $0.kind == kind && $0.speaker == speaker }
    }

    /// The full path of a clip's file.
    public func path(of clip: DemoClip) -> String {
        directory.appendingPathComponent(clip.file).path
    }
}

/// Something the demo could not do: the file, step or component involved, and what went wrong.
public typealias DemoError = PlacedError
