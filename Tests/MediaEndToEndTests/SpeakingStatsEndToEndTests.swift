import Foundation
import RoomTesting
import Testing

/// One person of a `stats` answer, as the bot printed it.
struct SpokenTally: Equatable, CustomStringConvertible {
    var peer: String
    var identity: String
    var name: String
    var seconds: Double
    var turns: Int
    var talking: Bool

    var description: String { "\(peer) \(seconds) s in \(turns) turns\(talking ? ", talking" : "")" }
}

/// The people of the `stats` answer with request id `id` in a bot's output; nil while there is none.
func statsAnswer(_ output: String, id: String) -> [SpokenTally]? {
    for line in output.split(separator: "\n") where line.contains("\"event\":\"stats\"") {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["id"] as? String == id, let people = object["people"] as? [[String: Any]]
        else { continue }
        return people.compactMap { person in
            guard let peer = person["peer"] as? String, let identity = person["identity"] as? String,
                let name = person["name"] as? String, let seconds = person["seconds"] as? Double,
                let turns = person["turns"] as? Int, let talking = person["talking"] as? Bool
            else { return nil }
            return SpokenTally(
                peer: peer, identity: identity, name: name, seconds: seconds, turns: turns, talking: talking)
        }
    }
    return nil
}

/// Speaking time as the server counts it, through a real server, with bots whose tones start and stop on cue.
@Suite(.ownThread, .serialized) struct SpeakingStatsEndToEndTests {
    /// How many times `text` is in `output`.
    func count(_ text: String, in output: String) -> Int {
        output.components(separatedBy: text).count - 1
    }

    /// Lets `bot` talk for `seconds`: from when the host hears it is unmuted (the `unmuted`-th time) to the bot
    /// muting itself, doing `during` meanwhile. Returns how long it talked as this test saw it.
    func talk(
        _ bot: RunningProcess, _ name: String, host: RunningProcess, unmuted: Int, seconds: Double,
        start: () -> Void, during: () -> Void = {}
    ) -> Double {
        start()
        let unmute = "\"mute_changed\",\"peer\":\"\(name)\",\"muted\":false"
        #expect(host.waitUntil(seconds: 15) { count(unmute, in: $0) >= unmuted }, "\(host.standardOutput)")
        let began = Date()
        during()
        let left = seconds - Date().timeIntervalSince(began)
        if left > 0 { usleep(UInt32(left * 1_000_000)) }
        bot.send("{\"cmd\":\"mute\",\"on\":true}")
        let talked = Date().timeIntervalSince(began)
        let mute = "\"mute_changed\",\"peer\":\"\(name)\",\"muted\":true"
        #expect(host.waitUntil(seconds: 15) { count(mute, in: $0) >= unmuted }, "\(host.standardOutput)")
        return talked
    }

    @Test func hostsSeeEachSpeakersTimeAndTurnsAndAListenerIsRefused() throws {
        let room = try TestServer(name: "stats")
        let host = try room.bot("hana", role: "host")
        #expect(host.waitFor("\"joined\""))
        // Two listeners with a tone each: nothing of theirs counts until they are on the stage and unmuted.
        let ana = try room.bot("ana", role: "audience", ["--tone", "440"])
        let bo = try room.bot("bo", role: "audience", ["--tone", "660"])
        let eli = try room.bot("eli", role: "audience")
        for bot in [ana, bo, eli] { #expect(bot.waitFor("\"media_path\""), "\(bot.standardOutput)") }
        usleep(500_000)

        // Ana: two turns of 4 s, Bo one of 5 s between them (each ends with a mute, so turns are clean).
        let anaFirst = talk(ana, "ana", host: host, unmuted: 1, seconds: 4) {
            host.send("{\"cmd\":\"set_role\",\"peer\":\"ana\",\"role\":\"speaker\"}")
        }
        var middle: [SpokenTally]?
        let boTalk = talk(
            bo, "bo", host: host, unmuted: 1, seconds: 5,
            start: { host.send("{\"cmd\":\"set_role\",\"peer\":\"bo\",\"role\":\"speaker\"}") },
            during: {
                // Asked while Bo talks: he is talking.
                usleep(1_500_000)
                host.send("{\"cmd\":\"stats\",\"id\":\"middle\"}")
                #expect(host.waitUntil(seconds: 4) { statsAnswer($0, id: "middle") != nil })
                middle = statsAnswer(host.standardOutput, id: "middle")
            })
        let anaSecond = talk(ana, "ana", host: host, unmuted: 2, seconds: 4) {
            ana.send("{\"cmd\":\"mute\",\"on\":false}")
        }
        usleep(1_000_000)
        host.send("{\"cmd\":\"stats\",\"id\":\"final\"}")
        eli.send("{\"cmd\":\"stats\",\"id\":\"nosy\"}")
        #expect(host.waitUntil(seconds: 10) { statsAnswer($0, id: "final") != nil }, "\(host.standardOutput)")
        #expect(eli.waitFor("\"id\":\"nosy\""), "\(eli.standardOutput)")
        RunningProcess.finish([ana, bo, eli, host])
        _ = room.stop()

        #expect(middle?.first { $0.peer == "bo" }?.talking == true, "\(String(describing: middle))")
        let people = statsAnswer(host.standardOutput, id: "final") ?? []
        #expect(people.map(\.peer) == ["ana", "bo"], "\(people)")
        let anaExpected = anaFirst + anaSecond
        if let anaTally = people.first(where: { $0.peer == "ana" }) {
            #expect(abs(anaTally.seconds - anaExpected) <= anaExpected / 10, "\(anaTally) for \(anaExpected) s")
            #expect(anaTally.turns == 2 && !anaTally.talking && anaTally.identity == "ana", "\(anaTally)")
        }
        if let boTally = people.first(where: { $0.peer == "bo" }) {
            #expect(abs(boTally.seconds - boTalk) <= boTalk / 10, "\(boTally) for \(boTalk) s")
            #expect(boTally.turns == 1 && !boTally.talking && boTally.identity == "bo", "\(boTally)")
        }
        #expect(
            eli.standardOutput.contains(
                #"{"event":"error","code":"forbidden","message":"only hosts and moderators can see how long each "#
                    + #"person has spoken","id":"nosy"}"#), "\(eli.standardOutput)")
        #expect(!eli.standardOutput.contains("\"event\":\"stats\""))
    }
}
