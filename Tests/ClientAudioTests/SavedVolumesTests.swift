import Foundation
import RoomTesting
import Testing

@testable import ClientAudio

@Suite struct SavedVolumesTests {
    @Test func defaultPathFollowsXDGStateHome() {
        #expect(
            SavedVolumes.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/clubroom/volumes.json")
        #expect(SavedVolumes.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/state/clubroom/volumes.json")
        // The XDG specification ignores relative paths.
        #expect(
            SavedVolumes.defaultPath(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"])
                == "/h/.local/state/clubroom/volumes.json")
    }

    @Test func volumesSurviveARestart() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("state/clubroom/volumes.json")
        let store = try SavedVolumes(path: path)
        #expect(store.volume(for: "ana") == 100)
        try store.setVolume(80, for: "ana")
        try store.setVolume(250, for: "bo")
        try store.setVolume(-5, for: "chen")
        let reloaded = try SavedVolumes(path: path)
        #expect(reloaded.all == ["ana": 80, "bo": 200, "chen": 0])
        try reloaded.setVolume(100, for: "ana")
        #expect(try SavedVolumes(path: path).all == ["bo": 200, "chen": 0])
    }

    @Test func aBadFileIsAClearError() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cases: [(String, String)] = [
            ("not json", "it is not JSON of the form {\"version\": 1, \"volumes\": {\"ID\": PERCENT}}"),
            ("{\"volumes\": {}}", "\"version\" is missing"),
            ("{\"version\": 2, \"volumes\": {}}", "version 2 is not one this Clubroom reads (1)"),
            ("{\"version\": 1, \"volumes\": {\"ana\": \"loud\"}}", "the volume of \"ana\" is not a whole number"),
            ("{\"version\": 1, \"volumes\": {\"ana\": 300}}", "the volume of \"ana\" is 300, outside 0 to 200"),
        ]
        for (text, detail) in cases {
            let path = directory.file("volumes.json")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: SavedVolumesError(path: path, problem: .malformed(detail))) {
                try SavedVolumes(path: path)
            }
        }
        let error = SavedVolumesError(path: "/x/volumes.json", problem: .malformed("\"version\" is missing"))
        #expect(
            error.description
                == "the volumes file /x/volumes.json is not valid: \"version\" is missing; fix it, or delete it to "
                + "start with every speaker at 100 %")
    }
}
