import Foundation
import RoomTesting
import Testing

/// A room streamed from the room: the server's operator names the destinations (`serve --stream NAME=URL`), a host
/// bot starts one by name, everyone is told, a real icecast2 carries the tone bot at 440 Hz, stopping it ends the
/// stream, and a destination with a wrong password reaches the host as the stream's own sentence.
@Suite(.ownThread, .serialized) struct RoomStreamingTests {
    @Test(.timeLimit(.minutes(3))) func aHostBotStreamsTheRoomToIcecastAndStopsIt() throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let (icecast, port) = try icecastServer(in: scratch.path + "/icecast", password: "sourcepw")
        defer { icecast.stop() }
        let room = try TestServer(
            name: "room-stream",
            serveArguments: [
                "--stream", "radio=icecast://source:sourcepw@127.0.0.1:\(port)/radio.opus",
                "--stream", "backup=icecast://source:wrongpw@127.0.0.1:\(port)/backup.opus",
            ])
        let ana = try room.bot("ana", role: "host", ["--tone", "440"])
        defer { ana.finish() }
        #expect(ana.waitFor("\"event\":\"joined\""))
        #expect(ana.standardOutput.contains(#""stream_destinations":["radio","backup"]"#), "\(ana.standardOutput)")
        let eli = try room.bot("eli", role: "audience")
        defer { eli.finish() }
        #expect(eli.waitFor("\"event\":\"joined\""))
        #expect(!eli.standardOutput.contains("stream_destinations"))

        ana.send(#"{"cmd":"start_stream","to":"radio","id":"s1"}"#)
        for bot in [ana, eli] {
            #expect(
                bot.waitUntil(seconds: 20) { $0.contains(#""event":"streaming""#) && $0.contains(#""to":["radio"]"#) },
                "\(bot.standardOutput)")
        }
        func childLog() -> String {
            (try? String(contentsOfFile: room.path("streams/stage-radio.log"), encoding: .utf8)) ?? "(no log)"
        }
        #expect(
            ana.waitFor(#""message":"Streaming to radio started.""#, seconds: 30),
            "\(ana.standardOutput)\nthe stream's recorder said: \(childLog())\nthe server: \(room.server.standardError)"
        )
        let heard = readBack("http://127.0.0.1:\(port)/radio.opus", seconds: 3) ?? []
        #expect(heardFrequency(heard) == 440, "Icecast: \(heard.count) samples")

        // A wrong password: the host is told in the stream's own words, once; the other stream goes on.
        ana.send(#"{"cmd":"start_stream","to":"backup"}"#)
        let refused = #""message":"Streaming to backup stopped: the server refused the password.""#
        #expect(ana.waitFor(refused, seconds: 20), "\(ana.standardOutput)")
        #expect(!eli.standardOutput.contains("refused the password"))
        let still = readBack("http://127.0.0.1:\(port)/radio.opus", seconds: 2) ?? []
        #expect(heardFrequency(still) == 440, "Icecast after the failure: \(still.count) samples")

        ana.send(#"{"cmd":"stop_stream","to":"radio"}"#)
        ana.send(#"{"cmd":"stop_stream","to":"backup"}"#)
        #expect(
            eli.waitUntil(seconds: 20) { $0.contains(#""event":"streaming","to":[],"by":"ana""#) },
            "\(eli.standardOutput)")
        for bot in [ana, eli] {
            #expect(!bot.standardOutput.contains("sourcepw") && !bot.standardOutput.contains("wrongpw"))
        }
        // The mount goes away once its source left.
        #expect(waitUntil(limit: 20) { (readBack("http://127.0.0.1:\(port)/radio.opus", seconds: 1) ?? []).isEmpty })
        let log = room.stop()
        #expect(!log.contains("sourcepw") && !log.contains("wrongpw"), "\(log)")
    }
}
