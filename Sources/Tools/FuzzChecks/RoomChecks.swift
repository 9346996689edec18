import Foundation
import RoomCore
import RoomProtocol
import StrictJSON

/// What a person types on the command line, the operator's roles file, and a recording's record.
enum RoomChecks {
    /// The shipped role table, `Resources/roles.json`, read from the source tree this was built from (the fuzz
    /// executable is built without SwiftPM's resource bundles).
    static let rolesURL: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/",
            !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path)
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("Resources/roles.json")
    }()

    static let table: RoleTable = {
        do {
            return try RoleTable.load(contentsOf: rolesURL)
        } catch {
            fatalError("\(error)")
        }
    }()

    static let peers: [Peer] = [
        Peer(id: "ana", name: "Ana", role: .host), Peer(id: "ana2", name: "Ana Lee", role: .speaker),
        Peer(id: "bo", name: "Bo", role: .moderator), Peer(id: "emile", name: "Émile"),
        Peer(id: "li", name: "李小龍"), Peer(id: "dev", name: "\u{1F469}\u{200D}\u{1F4BB} dev"),
        Peer(id: "quote", name: "x\"y\\z"),
    ]

    /// The name quoted for the command line (docs/commands.md): backslashes and quotes escaped.
    static func quoted(_ name: String) -> String {
        var text = String.UnicodeScalarView()
        text.append("\"")
        for scalar in name.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { text.append("\\") }
            text.append(scalar)
        }
        text.append("\"")
        return String(text)
    }

    /// Input: a byte choosing a peer, then a line as typed.
    static func commands(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        let chosen = peers[Int(choices.byte()) % peers.count]
        guard let line = String(validating: choices.rest, as: UTF8.self) else { return }

        let result = Command.parse(line, peers: peers, roles: table)
        let padded = Command.parse("  " + line + " \t", peers: peers, roles: table)
        try expect(padded == result, "padding changes \(line.debugDescription) from \(result) to \(padded)")
        let known = Set(peers.map(\.id))
        switch result {
        case .success(let command):
            switch command {
            case .invite(let id), .withdraw(let id), .mute(let id), .remove(let id, _, _, _), .move(let id, _),
                .dm(let id, _), .lowerHandOf(let id):
                try expect(known.contains(id), "\(command) names no one here")
            case .volume(let id, let percent):
                try expect(known.contains(id) && percent.map { (0...200).contains($0) } ?? true, "\(command)")
            case .chat(let text), .topic(let text), .toRole(_, let text):
                try expect(!text.isEmpty, "\(command) with no text")
            case .link(_, let ttl, let uses):
                try expect(ttl.map { $0 >= 0 } ?? true, "\(command) with a negative lifetime")
                try expect(uses.map { $0 >= 0 } ?? true, "\(command) with a negative number of uses")
            case .revoke(let id), .admit(let id), .deny(let id), .unban(let id):
                try expect(!id.isEmpty, "\(command) with no id")
            case .play(.file(let path)):
                try expect(!path.isEmpty, "\(command) with no file")
            case .play:
                break
            case .hand, .raiseHand, .lowerHand, .end, .help, .listed, .accept, .decline, .unmute, .who, .showTopic,
                .notify, .muteAll, .clearHands, .handsAllowed, .retry, .leave, .inviteNext, .links, .bans, .locked,
                .react, .record:
                break
            case .stats:
                break
            case .stream(.start(let name)), .stream(.stop(let name)):
                try expect(!name.isEmpty, "\(command) with no destination")
            case .stream(.list):
                break
            }
        case .failure(let error):
            try expect(!error.description.isEmpty, "a refusal without words")
            if case .unknownCommand(_, let suggestion?) = error {
                try expect(Command.names.contains(suggestion), "a suggestion of /\(suggestion), no command")
            }
        }

        // A quoted name always reaches its peer: one of the room's, or the typed line as a new peer's name.
        let byName = Command.parse("/mute " + quoted(chosen.name), peers: peers, roles: table)
        try expect(byName == .success(.mute(chosen.id)), "/mute \(quoted(chosen.name)) gives \(byName)")
        let name = DisplayName.sanitize(line)
        let wanted = name.lowercased()
        guard !name.isEmpty, !peers.contains(where: { $0.name.lowercased() == wanted || $0.id.rawValue == wanted })
        else { return }
        let newcomer = Peer(id: "newcomer", name: name)
        try expect(newcomer.name == name, "a clean name \(name.debugDescription) is cleaned again")
        let typed = "/invite " + quoted(name)
        let resolved = Command.parse(typed, peers: peers + [newcomer], roles: table)
        try expect(resolved == .success(.invite("newcomer")), "\(typed.debugDescription) gives \(resolved)")
    }

    /// Input: the bytes of a roles file.
    static func roles(_ input: [UInt8]) throws(FuzzFailure) {
        let parsed: RoleTable
        do {
            parsed = try RoleTable.parse(Data(input), source: "roles.json")
        } catch {
            try expect(error.description.hasPrefix("roles.json: "), "an error that does not name the file")
            return
        }
        try expect(parsed.contains(.host) && parsed.contains(.audience), "a table without host or audience")
        try expect(!parsed.isOnStage(.audience), "the audience on stage")
        try expect(
            zip(parsed.roles, parsed.roles.dropFirst()).allSatisfy { $0.rank <= $1.rank }, "roles out of rank order")
        try expect(Set(parsed.roles.map(\.name)).count == parsed.roles.count, "a role twice")
        let written = JSONValue.object(
            JSONObject([
                ("version", .integer(1)),
                (
                    "roles",
                    .array(
                        parsed.roles.map { role in
                            .object(
                                JSONObject([
                                    ("name", .string(role.name.rawValue)), ("label", .string(role.label)),
                                    ("rank", .integer(Int64(role.rank))), ("onStage", .bool(role.onStage)),
                                    (
                                        "permissions",
                                        .array(role.permissions.map(\.rawValue).sorted().map { .string($0) })
                                    ),
                                ]))
                        })
                ),
            ])
        ).encoded
        do {
            let again = try RoleTable.parse(Data(written), source: "written")
            try expect(again == parsed, "the table written out reads back differently")
        } catch {
            throw FuzzFailure("the table written out is refused: \(error)")
        }
    }

    // MARK: Seeds

    static func commandSeeds() -> [[UInt8]] {
        let lines = [
            "/invite ana", "/move \"Ana Lee\" mod", "/mute Bo", "/remove émile spamming the chat", "/hand",
            "/chat hello there", "/dm li 你好", "/topic Friday terminal hour", "/end thanks all", "/volume dev 150%",
            "/help", "//not a command", "/move ana host extra", "/remove \"unterminated", "/volume bo 300", "hi",
        ]
        return lines.enumerated().map { [UInt8($0.offset)] + Array($0.element.utf8) }
    }

    static func roleSeeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        if let data = try? Data(contentsOf: rolesURL) { seeds.append(Array(data)) }
        seeds.append(
            Array(
                #"{"version":1,"roles":[{"name":"host","rank":0,"onStage":true,"permissions":["end_room"]},{"name":"audience","label":"ear","rank":9,"onStage":false,"permissions":[]}]}"#
                    .utf8))
        seeds.append(Array(#"{"version":2,"roles":[]}"#.utf8))
        seeds.append(Array(#"{"version":1,"roles":[{"name":"Host","rank":-1}],"extra":0}"#.utf8))
        return seeds
    }

    /// The room's record beside a recording, as replay reads it: a refusal is the end of a sentence; an accepted
    /// record is in time order with no spurt ending before it starts, and written out (as the recorder writes it)
    /// reads back the same, its speaking times to a tenth of a second, and writes the same bytes again.
    static func recordingRecord(_ input: [UInt8]) throws(FuzzFailure) {
        let record: RecordingRecord
        do {
            record = try RecordingRecord.parse(input)
        } catch {
            try expect(error.description.hasPrefix("is "), "a refusal that does not finish a sentence: \(error)")
            return
        }
        try expect(record.durationMilliseconds >= 0, "a negative duration")
        try expect(zip(record.events, record.events.dropFirst()).allSatisfy { $0.at <= $1.at }, "events out of order")
        for event in record.events {
            try expect(event.at >= 0, "an event before the start")
            if case .talk(_, let end) = event.kind { try expect(end >= event.at, "a spurt ending before it starts") }
        }
        for speaker in record.speakers {
            try expect(
                speaker.seconds >= 0 && speaker.seconds <= RecordingRecord.maxSeconds && speaker.turns >= 0,
                "a speaking time out of its limits")
        }
        let written = record.json.encoded
        let again: RecordingRecord
        do {
            again = try RecordingRecord.parse(written)
        } catch {
            throw FuzzFailure("the record written out cannot be read back: \(error)")
        }
        var expected = record
        for index in expected.speakers.indices {
            expected.speakers[index].seconds = (record.speakers[index].seconds * 10).rounded() / 10
        }
        try expect(again == expected, "the record written out reads back as \(again), not \(expected)")
        try expect(again.json.encoded == written, "writing the record again gives other bytes")
    }

    static func recordingRecordSeeds() -> [[UInt8]] {
        let written = RecordingRecord(
            room: "jazz", topic: "New topic", startedMilliseconds: 1_796_000_000_000, durationMilliseconds: 61_240,
            complete: true,
            people: [
                .init(peer: "ana", name: "Ana", role: .host),
                .init(peer: "bea", identity: "bea@x", name: "Bea", role: .audience),
            ],
            events: [
                .init(at: 0, .stage("ana", .host)), .init(at: 0, .topic("Late sets", by: nil)),
                .init(at: 1_200, .talk("ana", end: 3_400)), .init(at: 5_000, .role("bea", .speaker, by: "ana")),
                .init(at: 6_000, .topic("New topic", by: "ana")),
                .init(at: 7_000, .chat("bea", name: "Bea", text: "hi")),
                .init(at: 8_000, .join("cy", name: "Cy", role: .audience)), .init(at: 9_000, .leave("cy")),
            ],
            speakers: [.init(identity: "ana", name: "Ana", seconds: 2.2, turns: 1)])
        return [
            written.json.encoded,
            Array(
                #"{"version":1,"room":"r","duration_ms":5000,"complete":false,"people":[{"peer":"a","name":"A","role":"speaker"}],"events":[{"at_ms":3000,"kind":"leave","peer":"a"},{"at_ms":1000,"kind":"talk","peer":"a","end_ms":2000},{"at_ms":9,"kind":"wave"}],"extra":[1]}"#
                    .utf8),
            Array(#"{"version":2,"room":"r"}"#.utf8),
            Array(
                #"{"version":1,"room":"r","duration_ms":10,"complete":true,"people":[],"events":[],"speakers":[{"identity":"a","name":"A","seconds":0.05,"turns":3}]}"#
                    .utf8),
        ]
    }
}
