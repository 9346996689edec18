import Arguments
import Foundation
import RoomApp
import RoomClient
import RoomCore
import RoomProtocol
import StrictJSON
import Synchronization
import TermUI

/// `clubroom rooms`: the server's live rooms, printed once, for people and scripts.
enum RoomsCommand: ClubroomCommand {
    static let declaration = Command(
        name: "rooms", abstract: "List a server's live rooms.",
        discussion: """
            Prints the rooms the server's lobby shows, most listeners first, and exits: a table, or JSON with \
            --json (the fields of docs/protocol.md, "The room directory"). Give a server link (clubroom invite \
            prints one), --token with a server invite, or on the server's machine --secret-file.
            """,
        positionals: [
            Positional(
                // Read as text: a link is taken as it was pasted (quotes, angle brackets), see `readLink`.
                "url", type: .string,
                help: "The server's link or address, such as ws://127.0.0.1:7480.")
        ],
        options: [json.option, token.option, secretFile.option])

    static let json = TypedOption.flag("json", help: "Print the rooms as JSON.")
    static let token = TypedOption.string("token", short: "t", placeholder: "TOKEN", help: "A server invite.")
    static let secretFile = TypedOption.path(
        "secret-file", placeholder: "FILE", help: "Server secret to mint a server invite with, on the server's machine."
    )

    struct Options: Equatable {
        var url: String
        var json: Bool
        var token: String?
        var secretFile: String?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            url = arguments.string("url") ?? ""
            try checkLinkScheme(url)
            json = arguments[RoomsCommand.json]
            token = arguments[RoomsCommand.token]
            secretFile = arguments[RoomsCommand.secretFile]
            if token != nil, secretFile != nil { throw .conflict("--token", "--secret-file") }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        let link = try readLink(options.url)
        if let room = link.room {
            // Not the link as given: it may carry an invite, which is a secret.
            throw JoinFailure(
                text: "That is the address of the room \(room); give the server's, such as \(link.server).")
        }
        let token: String
        switch (link.invite, options.token, options.secretFile) {
        case (let invite?, nil, nil): token = invite
        case (_?, _, _):
            throw JoinFailure(text: "The link carries its own invite; leave out --token and --secret-file.")
        case (nil, let given?, _): token = given
        case (nil, nil, let secretFile?):
            token = try Entry(
                kind: .mint(secretFile: secretFile, identity: "", name: "", role: "audience"), guestName: ""
            )
            .lobbyToken()
        case (nil, nil, nil):
            throw JoinFailure(
                text: "Listing the rooms needs a server link (clubroom invite prints one), --token or --secret-file.")
        }
        let rooms = try await Task.detached { try fetch(link.server.directoryURL, token: token) }.value
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        writeOutput(
            options.json ? jsonText(rooms, server: link.server) : tableText(rooms, server: link.server, now: now))
        return .success
    }

    /// Connects, waits for the list (10 s at most), and closes.
    static func fetch(_ url: String, token: String) throws -> [RoomListing] {
        let result = Mutex<Result<[RoomListing], JoinFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let session = try DirectorySession(url: url, token: token, reconnect: ReconnectPolicy(maximumAttempts: 0)) {
            event in
            let outcome: Result<[RoomListing], JoinFailure>?
            switch event {
            case .rooms(let rooms): outcome = .success(rooms)
            case .ended(let end): outcome = .failure(JoinFailure(text: DirectoryConnectionWords.describe(end)))
            case .changed, .reconnecting, .error, .welcome, .opened, .refused: outcome = nil
            }
            guard let outcome else { return }
            let first = result.withLock { stored -> Bool in
                guard stored == nil else { return false }
                stored = outcome
                return true
            }
            if first { done.signal() }
        }
        session.start()
        let waited = done.wait(timeout: .now() + .seconds(10))
        session.stop()
        session.shutdown()
        guard waited == .success, let outcome = result.withLock({ $0 }) else {
            throw JoinFailure(text: "The server at \(url) did not send its list of rooms within 10 seconds.")
        }
        return try outcome.get().sorted(by: RoomListing.lobbyOrder)
    }

    static func jsonText(_ rooms: [RoomListing], server: ServerAddress) -> String {
        JSONValue.object(
            JSONObject([
                ("server", .string(server.description)),
                (
                    "rooms",
                    .array(
                        rooms.map { room in
                            // Scripts read `recording` as true or false, never as absent.
                            guard case .object(var object) = DirectoryCodec.json(room) else { return .null }
                            // And `streaming` as a list, empty when the room streams nowhere, always after it.
                            object["recording"] = nil
                            object["streaming"] = nil
                            object["recording"] = .bool(room.recording)
                            object["streaming"] = .array(room.streaming.map { .string($0) })
                            return .object(object)
                        })
                ),
            ])
        ).encodedString + "\n"
    }

    /// The rooms as a table: one line each, columns aligned.
    static func tableText(_ rooms: [RoomListing], server: ServerAddress, now: Int64) -> String {
        guard !rooms.isEmpty else { return "No live rooms on \(server.displayName).\n" }
        // LIVE is how long the room has been live; STREAM where it goes out live (the server's names), or "-".
        let header = ["ROOM", "LISTENING", "ON STAGE", "HANDS", "LIVE", "REC", "STREAM", "TOPIC"]
        let rows = rooms.map { room -> [String] in
            [
                room.room, formatCount(room.listeners), formatCount(room.onStage), formatCount(room.raisedHands),
                LobbyScreenMapper.age(now - room.startedAt), room.recording ? "yes" : "no",
                room.streaming.isEmpty ? "-" : room.streaming.joined(separator: ","), room.topic,
            ]
        }
        let count = rooms.count
        return "\(count) live \(count == 1 ? "room" : "rooms") on \(server.displayName), most listeners first:\n"
            // Names and the topic read left to right; numbers line up on the right.
            + TextTable.text([header] + rows, rightAligned: [1, 2, 3])
    }
}

/// Why a directory session ended, in a person's words.
enum DirectoryConnectionWords {
    static func describe(_ end: SessionEnd) -> String {
        switch end {
        case .left, .closedByServer, .removed, .roomEnded, .replaced:
            "The server closed the connection before sending its rooms."
        case .refused(let code, let reason): Refusals.describe(code: code, reason: reason, withInvite: true)
        case .connectionFailed(let problem, _): "Cannot reach the server: \(problem). Check the address and try again."
        }
    }
}
