import ClubroomResources
import Foundation
import Platform
import RoomServer
import Synchronization

/// The demo's server, bots and director, started together and stopped together.
public final class DemoRoom: Sendable {
    public let server: DemoServer
    public let director: DemoDirector
    /// Who the bots play.
    public let cast: DemoCast

    /// Starts the server and the bots; throws when either cannot start (nothing is left running then).
    public init(roomSize: Int, notes given: @escaping @Sendable (DemoNote) -> Void) throws {
        let clips = try DemoClipLibrary.load(directory: ClubroomResources.clipsDirectory)
        let audio = try DemoClipAudio(library: clips)
        let logDescriptor = DemoRoom.openLog()
        let log = ServerLog(minimum: .warning, descriptor: logDescriptor)
        // Problems with bots are logged whatever else is done with the notes.
        let notes: @Sendable (DemoNote) -> Void = { note in
            if case .problem(let problem) = note { log.warning("demo: \(problem)") }
            given(note)
        }
        cast = .standard(audienceSize: roomSize)
        server = try DemoServer(room: "friday", logDescriptor: logDescriptor)
        do {
            let settings = DemoSettings(
                cast: cast, clips: clips,
                voice: { identity in
                    MediaVoice(audio: audio) { problem in notes(.problem("\(identity): \(problem)")) }
                },
                notes: notes)
            director = try DemoDirector(server: server, settings: settings)
            try director.start()
        } catch {
            server.shutdown()
            throw error
        }
    }

    private let stopped = Atomic<Bool>(false)

    /// Stops the bots, then the server, and removes the server's directory; later calls do nothing.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        director.stop()
        server.shutdown()
    }

    /// The server's log goes to `$XDG_STATE_HOME/clubroom/demo.log`, never to the terminal the demo draws on.
    static func openLog() -> Int32 {
        let directory = StateFolder.path(environment: ProcessInfo.processInfo.environment, home: NSHomeDirectory())
        StateFolder.prepare(directory)
        let descriptor = open(directory + "/demo.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        return descriptor >= 0 ? descriptor : open("/dev/null", O_WRONLY | O_CLOEXEC)
    }
}
