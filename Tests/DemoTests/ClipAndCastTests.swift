import ClubroomResources
import Foundation
import RoomProtocol
import Testing

@testable import Demo

@Suite struct ClipLibraryTests {
    /// The host is named after the login name; never "You" (a listener would read "You invited you to speak"),
    /// and never a name of the cast.
    @Test func theHostIsNamedAfterTheLoginNameOrHost() {
        let cast = DemoCast.standard(audienceSize: 0)
        #expect(cast.hostName(loginName: "ana") == "Ana")
        #expect(cast.hostName(loginName: "émile") == "Émile")
        #expect(cast.hostName(loginName: nil) == "Host")
        #expect(cast.hostName(loginName: "") == "Host")
        #expect(cast.hostName(loginName: "root") == "Host")
        #expect(cast.hostName(loginName: "you") == "Host")
        #expect(cast.hostName(loginName: "dara") == "Host")
        #expect(cast.hostName(loginName: "zoë") == "Host")
        // The audience counts too: Hana is its first listener.
        #expect(cast.hostName(loginName: "hana") == "Hana")
        #expect(DemoCast.standard(audienceSize: 20).hostName(loginName: "hana") == "Host")
    }

    /// The person who runs the demo joins as identity `you` with the host's role, under the host's name.
    @Test func theHostJoinsAsYouWithTheHostRole() {
        let cast = DemoCast.standard(audienceSize: 0)
        #expect(cast.host(loginName: "ana") == DemoCast.Member(identity: "you", name: "Ana", role: "host"))
        #expect(cast.host(loginName: "dara") == DemoCast.Member(identity: "you", name: "Host", role: "host"))
    }

    @Test func theBundledManifestNamesEveryPartOfTheCast() throws {
        let library = try DemoClipLibrary.load(directory: ClubroomResources.clipsDirectory)
        let cast = DemoCast.standard(audienceSize: 0)
        #expect(library.clip(.opening, by: cast.moderator.identity) != nil)
        #expect(library.clip(.guest, by: cast.moderator.identity) != nil)
        for raiser in cast.handRaisers {
            #expect(library.clip(.invited, by: raiser.member.identity) != nil, "\(raiser.member.identity)")
        }
        let talkers = Set(library.conversation.map(\.speaker))
        #expect(talkers == Set(cast.speakers.map(\.identity)))
        // Three speakers taking turns: nobody says two lines in a row.
        let speakers = library.conversation.map(\.speaker)
        #expect(zip(speakers, speakers.dropFirst() + speakers.prefix(1)).allSatisfy { $0 != $1 })
    }

    @Test func bundledClipsAreShortSpeech() throws {
        let library = try DemoClipLibrary.load(directory: ClubroomResources.clipsDirectory)
        for clip in library.clips {
            #expect((2.0...6.0).contains(clip.duration), "\(clip.file): \(clip.duration) s")
            let size = try FileManager.default.attributesOfItem(atPath: library.path(of: clip))[.size] as? Int ?? 0
            // 16 kHz mono 16-bit: 32,000 bytes a second, plus a 44-byte header.
            #expect(abs(size - 44 - Int(clip.duration * 32_000)) < 32_000 / 50, "\(clip.file): \(size) bytes")
        }
    }

    @Test func aMissingClipIsNamed() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-clips-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = #"[{"file":"x.wav","speaker":"sam","voice":"en","kind":"talk","duration":3,"text":"hi"}]"#
        try Data(manifest.utf8).write(to: directory.appendingPathComponent("manifest.json"))
        #expect(
            throws: DemoError(
                place: directory.appendingPathComponent("manifest.json").path, problem: "names x.wav, which is missing")
        ) {
            try DemoClipLibrary.load(directory: directory)
        }
    }

    @Test func anUnknownKindIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-kind-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = #"[{"file":"x.wav","speaker":"sam","voice":"en","kind":"song","duration":3,"text":"hi"}]"#
        try Data(manifest.utf8).write(to: directory.appendingPathComponent("manifest.json"))
        #expect(throws: DemoError.self) { try DemoClipLibrary.load(directory: directory) }
    }
}

@Suite struct CastTests {
    @Test func audienceNamesAndIdentitiesAreDistinct() {
        let audience = DemoCast.audienceMembers(count: 10_000)
        #expect(audience.count == 10_000)
        #expect(Set(audience.map(\.name)).count == 10_000)
        #expect(Set(audience.map(\.identity)).count == 10_000)
        #expect(audience[0] == DemoCast.Member(identity: "guest-0001", name: "Hana", role: "audience"))
        #expect(audience[DemoCast.audienceNames.count].name == "Hana A.")
        #expect(audience[DemoCast.audienceNames.count * 22].name == "Hana AA.")
    }

    @Test func theStandardCastHasItsParts() {
        let cast = DemoCast.standard(audienceSize: 20)
        #expect(cast.moderator.role == "moderator")
        #expect(cast.speakers.map(\.role) == ["speaker", "speaker", "speaker"])
        #expect(cast.handRaisers.map(\.raisesAfter) == [5, 15, 30])
        #expect(cast.audience.count == 20)
        #expect(cast.audience.contains { $0.name.unicodeScalars.contains { $0.value >= 0x3040 } })
        #expect(Set(cast.principals.map(\.identity)).count == 7)
    }

    @Test func everyNameFitsInAToken() {
        for member in DemoCast.standard(audienceSize: 200).principals + DemoCast.audienceMembers(count: 200) {
            #expect(member.name.count <= ControlLimits.maxNameCharacters)
            #expect(member.identity.utf8.count <= ControlLimits.maxIdentityBytes)
        }
    }
}
