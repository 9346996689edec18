import Foundation
import RoomTesting
import Testing

/// A fresh folder for one test, removed by the caller.
private func freshFolder() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-cli-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Runs clubroom with extra environment variables (`NAME=value`).
private func runClubroom(environment: [String], _ arguments: [String]) throws -> ProcessResult {
    try ChildProcess(environment + [try clubroomBinary().path] + arguments).finish(seconds: 30)
}

@Test func tokenNeverCreatesASecretAndNamesTheMissingFile() throws {
    let data = try freshFolder()
    defer { try? FileManager.default.removeItem(atPath: data) }
    let result = try runClubroom(
        environment: ["XDG_DATA_HOME=\(data)"], ["token", "--room", "r", "--identity", "i", "--role", "host"])
    #expect(result.status == 1)
    #expect(
        result.standardError
            == "clubroom token: there is no server secret at \(data)/clubroom/secret; start the server first "
            + "(clubroom serve creates it), or give the file the server uses with --secret-file FILE (or its "
            + "--data DIR)\n")
    #expect(result.standardOutput.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: "\(data)/clubroom/secret"))
}

/// Issue 27 (H3): `invite` without a secret file made a new secret and printed a link no server accepts.
@Test func inviteNeverCreatesASecretAndNamesTheMissingFile() throws {
    let data = try freshFolder()
    defer { try? FileManager.default.removeItem(atPath: data) }
    let result = try runClubroom(environment: ["XDG_DATA_HOME=\(data)"], ["invite", "ws://127.0.0.1:7480"])
    #expect(result.status == 1)
    #expect(
        result.standardError
            == "clubroom invite: there is no server secret at \(data)/clubroom/secret; start the server first "
            + "(clubroom serve creates it), or give the file the server uses with --secret-file FILE (or its "
            + "--data DIR)\n")
    #expect(result.standardOutput.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: "\(data)/clubroom/secret"))
    // With the server's data folder, the link is made.
    let secret = data + "/secret"
    _ = FileManager.default.createFile(
        atPath: secret, contents: Data((String(repeating: "ab", count: 32) + "\n").utf8),
        attributes: [.posixPermissions: 0o600])
    let made = try runClubroom(["invite", "ws://127.0.0.1:7480", "--data", data])
    #expect(made.status == 0)
    #expect(made.standardOutput.hasPrefix("ws://127.0.0.1:7480/rooms#invite=eyJ"))
}

@Test func tokenFindsTheSecretOfTheServersDataFolder() throws {
    let data = try freshFolder()
    defer { try? FileManager.default.removeItem(atPath: data) }
    let secret = data + "/secret"
    _ = FileManager.default.createFile(
        atPath: secret, contents: Data((String(repeating: "ab", count: 32) + "\n").utf8),
        attributes: [.posixPermissions: 0o600])
    let result = try runClubroom(["token", "--room", "r", "--identity", "i", "--role", "host", "--data", data])
    #expect(result.status == 0)
    #expect(result.standardOutput.hasPrefix("eyJ"))
    #expect(result.standardOutput.split(separator: ".").count == 3)
}

@Test func devicesAndJoinsHelpListTheVirtualDevices() throws {
    let devices = try runClubroom(["devices"])
    #expect(devices.status == 0)
    for name in ["tone:HZ ", "wav:PATH ", "silence ", "record:PATH "] {
        #expect(devices.standardOutput.contains("\n  \(name)"), "devices lists \(name)")
    }
    let help = try runClubroom(["join", "--help"])
    #expect(help.status == 0)
    // The help wraps at 80 columns: compare with its words joined by single spaces.
    let words = help.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(words.contains("Microphone: an ALSA PCM, tone:HZ, wav:PATH or silence"))
    #expect(words.contains("--token-file FILE"))
}

/// Issue 27 (polish): a recording to a folder that does not exist was dropped for `null` without a word; `join`,
/// `demo` and the bot's `--record` now say so and stop before joining.
@Test func aRecordingThatCannotBeWrittenIsSaidBeforeJoining() throws {
    let path = "/nonexistent/dir/x.wav"
    let join = try runClubroom(["join", "ws://127.0.0.1:1/rooms/r", "--token", "t", "--output", "record:\(path)"])
    #expect(join.status == 1)
    #expect(
        join.standardError
            == "clubroom join: --output record:\(path): the recording cannot be written, because the folder "
            + "/nonexistent/dir does not exist\n")
    let demo = try runClubroom(["demo", "--plain", "--output", "record:\(path)"])
    #expect(demo.status == 1)
    #expect(
        demo.standardError
            == "clubroom demo: --output record:\(path): the recording cannot be written, because the folder "
            + "/nonexistent/dir does not exist\n")
    let bot = try runClubroom(["bot", "ws://127.0.0.1:1/rooms/r", "--token", "t", "--record", path])
    #expect(bot.status == 1)
    #expect(
        bot.standardError
            == "clubroom bot: --record \(path): the recording cannot be written, because the folder "
            + "/nonexistent/dir does not exist\n")
    let folder = try freshFolder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let inFolder = try runClubroom(["join", "ws://127.0.0.1:1/rooms/r", "--token", "t", "--output", "record:\(folder)"])
    #expect(inFolder.status == 1)
    #expect(
        inFolder.standardError
            == "clubroom join: --output record:\(folder): the recording cannot be written, because \(folder) is a "
            + "folder; give a file name inside it\n")
}

@Test func aBarePathToAWAVFileSaysHowToUseIt() throws {
    let folder = try freshFolder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let wav = folder + "/talk.wav"
    _ = FileManager.default.createFile(atPath: wav, contents: Data())
    let result = try runClubroom(["join", "ws://127.0.0.1:1/rooms/r", "--token", "t", "--input", wav])
    #expect(result.status == 1)
    #expect(
        result.standardError
            == "clubroom join: --input \(wav) is a file, not a microphone; to play it as your microphone, write "
            + "--input wav:\(wav)\n")
}

@Test func anEmptyTokenIsSaidBeforeConnecting() throws {
    for environment in [[], ["CLUBROOM_TOKEN= "]] {
        let arguments = environment.isEmpty ? ["--token", ""] : []
        let result = try runClubroom(environment: environment, ["join", "ws://127.0.0.1:1/rooms/r"] + arguments)
        #expect(result.status == 1)
        #expect(
            result.standardError
                == "clubroom join: the token is empty; give the one the room's host sent you (--token, "
                + "--token-file or CLUBROOM_TOKEN)\n")
    }
}

@Test func theTokenComesFromAFileOrTheEnvironment() throws {
    let folder = try freshFolder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let file = folder + "/token"
    _ = FileManager.default.createFile(atPath: file, contents: Data("not-a-token\n".utf8))
    // Both reach the server (here: no server), so the token was read: the failure is the connection's.
    for (environment, arguments) in [([], ["--token-file", file]), (["CLUBROOM_TOKEN=not-a-token"], [])] {
        let result = try runClubroom(
            environment: environment, ["join", "ws://127.0.0.1:1/rooms/r", "--plain"] + arguments)
        #expect(result.status == 1)
        #expect(result.standardError.contains("Nothing answers at this address."), "\(result.standardError)")
    }
    let missing = try runClubroom(["join", "ws://127.0.0.1:1/rooms/r", "--token-file", folder + "/none"])
    #expect(missing.status == 1)
    #expect(missing.standardError == "clubroom join: cannot read the token file \(folder)/none; check the path\n")
}

@Test func aDumbTerminalGetsLineModeAndIsToldSo() throws {
    let result = try runClubroom(
        environment: ["TERM=dumb"], ["join", "ws://127.0.0.1:1/rooms/r/", "--token", "t", "--output", "null"])
    #expect(result.status == 1)
    #expect(
        result.firstErrorLine
            == "clubroom join: TERM=dumb cannot draw the room screen, so this is line mode (--plain).")
    // A slash at the end of the address is dropped, so the failure is the connection's, not a bare 404.
    #expect(
        result.standardOutput
            == "Nothing answers at this address. Check the address and port, and that the server runs.\n")
}

/// The role inside a token or an invite link (its payload's `role`).
private func roleInside(_ printed: String) -> String? {
    let token = printed.trimmingCharacters(in: .whitespacesAndNewlines).components(separatedBy: "#invite=").last ?? ""
    let parts = token.split(separator: ".")
    guard parts.count == 3 else { return nil }
    var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while payload.count % 4 != 0 { payload += "=" }
    guard let data = Data(base64Encoded: payload),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    return object["role"] as? String
}

/// Issue 27 (M5): the screen and the README say "listener" and "mod", and `--role listener` was refused. Both
/// spellings are taken everywhere, and a role that is neither is a usage error (status 2) listing the roles.
@Test func roleWordsAreTakenInBothSpellingsAndABadOneIsAUsageError() throws {
    let data = try freshFolder()
    defer { try? FileManager.default.removeItem(atPath: data) }
    _ = FileManager.default.createFile(
        atPath: data + "/secret", contents: Data((String(repeating: "ab", count: 32) + "\n").utf8),
        attributes: [.posixPermissions: 0o600])
    let token = ["token", "--room", "r", "--identity", "i", "--data", data, "--role"]
    for (word, role) in [
        ("mod", "moderator"), ("Moderator", "moderator"), ("listener", "audience"), ("host", "host"),
        ("recorder", "recorder"),
    ] {
        let made = try runClubroom(token + [word])
        #expect(made.status == 0, "\(word): \(made.standardError)")
        #expect(roleInside(made.standardOutput) == role, "token --role \(word)")
        let link = try runClubroom(["invite", "ws://127.0.0.1:7480", "--data", data, "--role", word])
        #expect(link.status == 0, "\(word): \(link.standardError)")
        #expect(roleInside(link.standardOutput) == role, "invite --role \(word)")
    }
    let expected =
        "bad value 'dj' for '--role' (expected a role: host, moderator (mod), speaker, audience (listener), recorder)"
    for command in [token + ["dj"], ["invite", "ws://127.0.0.1:7480", "--data", data, "--role", "dj"]] {
        let refused = try runClubroom(command)
        #expect(refused.status == 2, "\(command[0]): \(refused.standardError)")
        #expect(refused.standardError.contains(expected), "\(refused.standardError)")
        #expect(refused.standardOutput.isEmpty)
    }
    let joining = try runClubroom(
        [
            "join", "ws://127.0.0.1:1/rooms/r", "--plain", "--secret-file", data + "/secret", "--identity", "i",
            "--role",
            "dj",
        ])
    #expect(joining.status == 2, "\(joining.standardError)")
    #expect(joining.standardError.contains(expected), "\(joining.standardError)")
}
