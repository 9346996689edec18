import Arguments

/// `clubroom demo`: a live room with speaking bots.
enum DemoCommand: ClubroomCommand {
    static let declaration = Command(
        name: "demo", abstract: "Open a live demo room with speaking bots.",
        discussion: """
            Starts a server on a free loopback port, fills a room with bots that speak, raise their hands and \
            chat, and opens it with you as host. Quitting stops everything it started.
            """,
        options: [
            .value(
                "room-size", placeholder: "N", type: .integer(0...10_000), default: "20",
                help: "Number of audience members."),
            .value("output", placeholder: "PCM", default: "default", help: "ALSA playback device."),
            .flag("no-ui", help: "Print the room's events as lines instead of opening the room screen."),
        ])

    /// The demo's settings, as given on the command line.
    struct Options: Equatable {
        var roomSize: Int
        var output: String
        var showsUI: Bool

        init(_ arguments: ParsedArguments) {
            roomSize = arguments.integer("room-size") ?? 20
            output = arguments.string("output") ?? "default"
            showsUI = !arguments.flag("no-ui")
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        _ = Options(arguments)
        throw CommandFailure.notAvailable("the demo is not available in this build yet")
    }
}
