import Foundation
import Platform
import Synchronization

/// Each speaker's local volume, kept per identity across sessions in a small JSON file:
/// `$XDG_STATE_HOME/clubroom/volumes.json` (`~/.local/state/clubroom/volumes.json` when that is not set).
///
/// ```json
/// { "version": 1, "volumes": { "ana": 80, "bo": 150 } }
/// ```
///
/// Volumes are percentages from 0 to 200; a speaker not in the file plays at 100. A missing file is an empty
/// one. A file that cannot be read or does not hold that shape is an error that names the file and the problem,
/// never silently replaced.
public final class SavedVolumes: Sendable {
    /// The volume of a speaker nobody has adjusted.
    public static let defaultVolume = 100
    /// The accepted volumes, in percent.
    public static let range = 0...200

    /// Where the volumes are kept; nil keeps them in memory only.
    public let path: String?
    private let volumes: Mutex<[String: Int]>

    /// The default file: `$XDG_STATE_HOME/clubroom/volumes.json`, or `$HOME/.local/state/clubroom/volumes.json`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        StateFolder.path(environment: environment, home: NSHomeDirectory()) + "/volumes.json"
    }

    /// Loads the volumes kept at `path` (nothing when the file does not exist yet); nil keeps them in memory.
    public init(path: String?) throws(SavedVolumesError) {
        self.path = path
        guard let path, FileManager.default.fileExists(atPath: path) else {
            volumes = Mutex([:])
            return
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SavedVolumesError(path: path, problem: .unreadable("cannot be read"))
        }
        volumes = Mutex(try Self.decode(data, path: path))
    }

    /// The volume of `speaker` in percent.
    public func volume(for speaker: String) -> Int {
        volumes.withLock { $0[speaker] } ?? Self.defaultVolume
    }

    /// Every adjusted volume.
    public var all: [String: Int] { volumes.withLock { $0 } }

    /// Sets the volume of `speaker` (clamped to 0–200 %) and saves the file.
    public func setVolume(_ percent: Int, for speaker: String) throws(SavedVolumesError) {
        let clamped = min(Self.range.upperBound, max(Self.range.lowerBound, percent))
        let snapshot = volumes.withLock { volumes -> [String: Int] in
            volumes[speaker] = clamped == Self.defaultVolume ? nil : clamped
            return volumes
        }
        try save(snapshot)
    }

    private func save(_ snapshot: [String: Int]) throws(SavedVolumesError) {
        guard let path else { return }
        let file = VolumeFile(version: 1, volumes: snapshot)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let data = try encoder.encode(file)
            let directory = (path as NSString).deletingLastPathComponent
            guard StateFolder.prepare(directory) else {
                throw SavedVolumesError(path: path, problem: .unwritable("its folder cannot be made"))
            }
            // Written beside the file and renamed over it, so a crash never leaves half a file.
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw SavedVolumesError(path: path, problem: .unwritable(error.localizedDescription))
        }
    }

    private struct VolumeFile: Codable {
        var version: Int
        var volumes: [String: Int]
    }

    static func decode(_ data: Data, path: String) throws(SavedVolumesError) -> [String: Int] {
        func malformed(_ detail: String) -> SavedVolumesError {
            SavedVolumesError(path: path, problem: .malformed(detail))
        }
        let file: VolumeFile
        do {
            file = try JSONDecoder().decode(VolumeFile.self, from: data)
        } catch let DecodingError.keyNotFound(key, _) {
            throw malformed("\"\(key.stringValue)\" is missing")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let place = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw malformed(
                place.hasPrefix("volumes.")
                    ? "the volume of \"\(place.dropFirst("volumes.".count))\" is not a whole number"
                    : "\"\(place.isEmpty ? "the top level" : place)\" has the wrong type")
        } catch {
            throw malformed("it is not JSON of the form {\"version\": 1, \"volumes\": {\"ID\": PERCENT}}")
        }
        guard file.version == 1 else {
            throw malformed("version \(file.version) is not one this Clubroom reads (1)")
        }
        for (speaker, percent) in file.volumes where !range.contains(percent) {
            throw malformed("the volume of \"\(speaker)\" is \(percent), outside 0 to 200")
        }
        return file.volumes
    }
}

/// The volumes file could not be read, parsed or written.
public struct SavedVolumesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Sendable, Equatable {
        /// The file exists but could not be read.
        case unreadable(String)
        /// The file does not hold the expected JSON.
        case malformed(String)
        /// Saving failed.
        case unwritable(String)
    }

    /// The file.
    public let path: String
    /// What went wrong.
    public let problem: Problem

    public var description: String {
        switch problem {
        case .unreadable(let detail):
            return "the volumes file \(path) \(detail)"
        case .malformed(let detail):
            return "the volumes file \(path) is not valid: \(detail); fix it, or delete it to start with every "
                + "speaker at 100 %"
        case .unwritable(let detail):
            return "could not save the volumes file \(path): \(detail)"
        }
    }
}
