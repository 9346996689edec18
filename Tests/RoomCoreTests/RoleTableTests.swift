import Foundation
import Testing

@testable import RoomCore

@Suite struct RoleTableTests {
    @Test func theShippedTableHasTheFiveRolesInRankOrder() {
        #expect(roles.roles.map(\.name) == [.host, .moderator, .speaker, .audience, .recorder])
        #expect(roles.roles.map(\.rank) == [0, 1, 2, 3, 4])
        #expect(roles.definition(of: .recorder) == RoleTable.recorderDefinition(rank: 4))
        #expect(roles.label(of: .moderator) == "mod")
        #expect(roles.isOnStage(.speaker))
        #expect(!roles.isOnStage(.audience))
        #expect(!roles.isOnStage("nobody"))
    }

    @Test func permissionsFollowTheTable() {
        #expect(roles.can(.host, .endRoom))
        #expect(!roles.can(.moderator, .endRoom))
        #expect(roles.can(.moderator, .muteOthers))
        #expect(roles.can(.speaker, .publishAudio))
        #expect(!roles.can(.speaker, .invite))
        #expect(roles.can(.audience, .raiseHand))
        #expect(!roles.can(.audience, .publishAudio))
        #expect(!roles.can("nobody", .chat))
    }

    @Test func actingOnOthersNeedsStrictlyHigherStanding() {
        #expect(roles.mayActOn(actor: .host, target: .moderator))
        #expect(roles.mayActOn(actor: .moderator, target: .speaker))
        #expect(!roles.mayActOn(actor: .moderator, target: .moderator))
        #expect(!roles.mayActOn(actor: .moderator, target: .host))
        #expect(!roles.mayActOn(actor: "nobody", target: .audience))
    }

    @Test func assigningARoleNeedsAtLeastItsStanding() {
        #expect(roles.mayAssign(actor: .host, role: .host))
        #expect(roles.mayAssign(actor: .host, role: .moderator))
        #expect(roles.mayAssign(actor: .moderator, role: .moderator))
        #expect(!roles.mayAssign(actor: .moderator, role: .host))
        #expect(!roles.mayAssign(actor: .host, role: "nobody"))
    }

    @Test func refusalsNameWhoMay() {
        #expect(roles.refusal(lacking: .invite).reason == "only hosts and moderators can invite people to speak")
        #expect(roles.refusal(lacking: .endRoom).reason == "only hosts can end the room")
        #expect(roles.refusal(lacking: .chat).reason == "only hosts, moderators, speakers and listeners can chat")
    }

    @Test func checkAppliesPermissionAndRankRules() {
        let host = peer("h", "Hana", .host)
        let mod = peer("m", "Mo", .moderator)
        let mod2 = peer("m2", "Mia", .moderator)
        let speaker = peer("s", "Sol", .speaker)
        let listener = peer("l", "Lu")
        #expect(roles.check(.invite("l"), by: mod, target: listener) == nil)
        #expect(roles.check(.invite("s"), by: mod, target: speaker) == Refusal("Sol is already on the stage"))
        #expect(
            roles.check(.invite("l"), by: speaker, target: listener)
                == Refusal("only hosts and moderators can invite people to speak"))
        #expect(roles.check(.setRole("s", .moderator), by: host, target: speaker) == nil)
        #expect(
            roles.check(.setRole("s", .host), by: mod, target: speaker)
                == Refusal("a moderator cannot make someone a host"))
        #expect(
            roles.check(.setRole("m2", .speaker), by: mod, target: mod2)
                == Refusal("you cannot move Mia: a moderator is not below a moderator"))
        // Your own role: stepping down needs no permission; stepping up is the room's to decide (the token).
        #expect(roles.check(.setRole("m", .speaker), by: mod, target: mod) == nil)
        #expect(roles.check(.setRole("m", .host), by: mod, target: mod) == nil)
        #expect(
            roles.check(.setRole("m", .moderator), by: mod, target: mod) == Refusal("you are already a moderator"))
        #expect(
            roles.check(.setRole("s", "boss"), by: host, target: speaker) == Refusal("there is no role called boss"))
        #expect(roles.check(.setRole("s", .speaker), by: host, target: speaker) == Refusal("Sol is already a speaker"))
        #expect(
            roles.check(.mutePeer("h"), by: mod, target: host)
                == Refusal("you cannot mute Hana: a host is not below a moderator"))
        #expect(roles.check(.remove("l", reason: nil), by: mod, target: listener) == nil)
        #expect(roles.check(.remove("m", reason: nil), by: mod, target: mod) == Refusal("you cannot remove yourself"))
        #expect(roles.check(.endRoom(reason: nil), by: mod, target: nil) == Refusal("only hosts can end the room"))
        #expect(
            roles.check(.setMute(false), by: listener, target: nil)
                == Refusal("only hosts, moderators and speakers can speak"))
        #expect(roles.check(.setMute(true), by: listener, target: nil) == nil)
        #expect(
            roles.check(.raiseHand, by: speaker, target: nil)
                == Refusal("only hosts, moderators and listeners can raise a hand"))
        #expect(roles.check(.stepDown, by: listener, target: nil) == Refusal("you are not on the stage"))
    }
}

@Suite struct RoleTableErrorTests {
    /// Loads `json` from a temporary file and returns the error's text, with the file's path replaced by FILE.
    func failure(_ json: String) throws -> String {
        let url = try temporaryFile(json)
        do {
            _ = try RoleTable.load(contentsOf: url)
            return "loaded"
        } catch {
            #expect(error.source == url.path)
            return error.description.replacingOccurrences(of: url.path, with: "FILE")
        }
    }

    func role(_ name: String, rank: Int = 0, onStage: Bool = true, permissions: String = #"["chat"]"#) -> String {
        #"{"name": "\#(name)", "rank": \#(rank), "onStage": \#(onStage), "permissions": \#(permissions)}"#
    }

    func table(_ roles: String...) -> String {
        #"{"version": 1, "roles": [\#(roles.joined(separator: ","))]}"#
    }

    @Test func aMissingFileSaysSo() {
        let url = URL(fileURLWithPath: "/nonexistent/clubroom/roles.json")
        #expect(throws: RoleTableError(source: url.path, path: "", problem: .missingFile)) {
            try RoleTable.load(contentsOf: url)
        }
        #expect(
            RoleTableError(source: url.path, path: "", problem: .missingFile).description
                == "/nonexistent/clubroom/roles.json: file not found")
    }

    @Test func badJSONNamesTheFile() throws {
        let text = try failure(#"{"version": 1, "roles": [}"#)
        #expect(text.hasPrefix("FILE: not valid JSON ("))
        #expect(text == "FILE: not valid JSON (unexpected byte 0x7d at byte 25, line 1, column 26)")
    }

    /// A key written twice would let two readers take two different tables from one file; it is refused with
    /// the object it is in and where it stands.
    @Test func aDuplicateKeyIsRefusedWithItsPlace() throws {
        let json = """
            {"version": 1, "roles": [
              {"name": "host", "rank": 0, "onStage": true, "permissions": []},
              {"name": "audience", "rank": 1, "onStage": false, "rank": 0, "permissions": []}
            ]}
            """
        #expect(
            try failure(json) == "FILE: roles[1]: the key \"rank\" appears twice (line 3, column 53)")
        #expect(
            try failure(#"{"version": 1, "version": 1, "roles": []}"#)
                == "FILE: the key \"version\" appears twice (line 1, column 16)")
    }

    @Test func anUnknownPermissionNamesItsPlace() throws {
        let json = table(
            role("host"), role("mod", rank: 1),
            role("audience", rank: 3, onStage: false, permissions: #"["chat", "fly"]"#))
        #expect(
            try failure(json)
                == "FILE: roles[2].permissions[1]: unknown permission \"fly\"; known: publish_audio, raise_hand, chat, invite, move, mute_others, remove, set_topic, end_room, record, stream"
        )
    }

    @Test func aDuplicateRoleNamesBothPlaces() throws {
        let json = table(role("host"), role("audience", onStage: false), role("host", rank: 2))
        #expect(try failure(json) == "FILE: roles[2].name: duplicate role \"host\" (first defined at roles[0])")
    }

    @Test func missingHostOrAudienceRoles() throws {
        #expect(
            try failure(table(role("audience", onStage: false)))
                == "FILE: roles: no \"host\" role; every table needs \"host\" and \"audience\"")
        #expect(
            try failure(table(role("host")))
                == "FILE: roles: no \"audience\" role; every table needs \"host\" and \"audience\"")
    }

    @Test func theAudienceMustBeOffStage() throws {
        #expect(
            try failure(table(role("host"), role("audience", rank: 1)))
                == "FILE: roles[1].onStage: the \"audience\" role must have \"onStage\": false")
    }

    @Test func wrongTypesMissingAndUnknownKeys() throws {
        #expect(
            try failure(
                #"{"version": 1, "roles": [{"name": "host", "rank": "0", "onStage": true, "permissions": []}]}"#)
                == "FILE: roles[0].rank: expected a whole number")
        #expect(
            try failure(#"{"version": 1, "roles": [{"name": "host", "rank": 0, "onStage": 1, "permissions": []}]}"#)
                == "FILE: roles[0].onStage: expected true or false")
        #expect(
            try failure(#"{"version": 1, "roles": [{"name": "host", "rank": 0, "permissions": []}]}"#)
                == "FILE: roles[0]: missing \"onStage\"")
        #expect(
            try failure(#"{"version": 1, "roles": [{"name": "host", "rank": 0, "onstage": true, "permissions": []}]}"#)
                == "FILE: roles[0].onstage: unknown key \"onstage\"; allowed: name, label, rank, onStage, permissions")
        #expect(try failure(#"{"roles": []}"#) == "FILE: missing \"version\"")
        // A key starting with a combining mark (U+0734) would join the space before it: the path is quoted, so the
        // message still starts with the file's name and its place (found by the roles fuzz target).
        #expect(
            try failure("{\"version\": 1, \"\u{0734}ons\": []}")
                == "FILE: \"\u{0734}ons\": unknown key \"\u{0734}ons\"; allowed: version, roles")
        #expect(
            try failure(#"{"version": 2, "roles": []}"#)
                == "FILE: version: unsupported version 2; this Clubroom reads version 1")
        #expect(try failure(#"{"version": 1, "roles": {}}"#) == "FILE: roles: expected an array")
        #expect(try failure(#"[1, 2]"#) == "FILE: expected an object")
    }

    @Test func badNamesRanksAndRepeatedPermissions() throws {
        #expect(
            try failure(table(role("Host")))
                == "FILE: roles[0].name: role name \"Host\" may use only lowercase letters, digits, '-' and '_'")
        #expect(try failure(table(role(""))) == "FILE: roles[0].name: role name is empty")
        #expect(
            try failure(table(role("host", rank: -1)))
                == "FILE: roles[0].rank: rank -1 is negative; 0 is the highest standing")
        #expect(
            try failure(table(role("host", permissions: #"["chat", "chat"]"#)))
                == "FILE: roles[0].permissions[1]: permission \"chat\" is listed twice")
        #expect(
            try failure(table(role("host", permissions: #"["chat", 3]"#)))
                == "FILE: roles[0].permissions[1]: expected a string")
    }

    @Test func parseNamesTheGivenSource() {
        #expect(throws: RoleTableError(source: "built-in", path: "", problem: .missingKey("version"))) {
            try RoleTable.parse(Data("{}".utf8), source: "built-in")
        }
    }

    @Test func aValidCustomTableLoads() throws {
        let json = table(
            role("host", permissions: #"["end_room", "move"]"#), role("guest", rank: 2, permissions: "[]"),
            role("audience", rank: 5, onStage: false))
        let table = try RoleTable.load(contentsOf: try temporaryFile(json))
        #expect(table.roles.map(\.name) == [.host, "guest", .audience, .recorder])
        #expect(table.label(of: "guest") == "guest")
        #expect(table.can(.host, .endRoom))
        #expect(!table.can("guest", .chat))
    }
}
