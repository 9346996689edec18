import ClientAudio
import RoomApp
import RoomAppRuntime
import RoomCore
import RoomProtocol
import WebSocket

/// `clubroom join SERVER-URL`: the lobby, and the rooms entered from it.
extension JoinCommand {
    static func runLobby(
        link: ClubroomLink, entry: Entry, roles: RoleTable, audio: RoomAudioSettings, options: Options
    ) async throws -> ExitStatus {
        let lobbyToken = try entry.lobbyToken()
        let server = link.server
        // Who this person is, for the server to check before it opens a room for them; a link whose server may
        // not be shown the key (ws:// to another machine) still shows the list.
        let headers =
            (try? Entry.guestHeaders(name: entry.guestName, server: server, profile: entry.profile)) ?? HTTPHeaders()
        let connect: @Sendable () -> LobbyConnection = {
            DirectoryConnection(url: server.directoryURL, token: lobbyToken, headers: headers)
        }
        // A room's connection, with what opens it.
        let flow = LobbyFlow(roles: roles, ascii: options.ascii) { room in
            do {
                // A room this person just opened is entered with the host's link the server gave for it.
                let credential =
                    try room.invite.map {
                        (
                            $0, try Entry.guestHeaders(name: entry.guestName, server: server, profile: entry.profile),
                            true
                        )
                    } ?? entry.credential(forRoom: room.room, at: server)
                return .success(
                    SessionConnection(
                        url: server.roomURL(room.room), token: credential.0, headers: credential.1,
                        withInvite: credential.2, audio: audio))
            } catch let failure as JoinFailure {
                return .failure(RoomUnavailable(failure.text))
            } catch {
                return .failure(RoomUnavailable("\(error)"))
            }
        }
        let state = LobbyState(server: server.displayName, lineMode: options.plain)
        let outcome =
            options.plain
            ? try FrontEnds.lobbyLines(flow, state: state, connect: connect, output: { writeOutput($0 + "\n") })
            : try await FrontEnds.lobbyScreen(flow, state: state, connect: connect)
        switch outcome {
        case .quit: return .success
        case .failed(let why): throw JoinFailure(text: why)
        }
    }
}
