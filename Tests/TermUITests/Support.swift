import Foundation
import RoomTesting
import Testing

@testable import TermUI

/// The buffer's attributes, one character per cell: `.` for none, else a hex digit of bold (1), dim (2),
/// reverse (4) and underline (8). Without colour these are all that tells things apart.
func attributeMap(_ buffer: CellBuffer) -> CellBuffer {
    var map = CellBuffer(width: buffer.width, height: buffer.height)
    for y in 0..<buffer.height {
        for x in 0..<buffer.width {
            let style = buffer[x, y].style
            let bits =
                (style.bold ? 1 : 0) | (style.dim ? 2 : 0) | (style.reverse ? 4 : 0) | (style.underline ? 8 : 0)
            let mark: Character = bits == 0 ? "." : Character(String(bits, radix: 16))
            map.set(mark, x: x, y: y, style: .plain)
        }
    }
    return map
}

/// Renders the room screen for `model` at a size.
func render(
    _ model: RoomScreenModel, width: Int = 80, height: Int = 24, theme: Theme = Theme(level: .ansi256)
)
    -> CellBuffer
{
    var buffer = CellBuffer(width: width, height: height)
    RoomScreen.render(model, into: &buffer, theme: theme)
    return buffer
}

/// Scenes used by the golden tests, modelled on the sketch in the UX notes.
enum Scenes {
    static let sketchStage: [RoomScreenModel.StageEntry] = [
        .init(name: "Ana", role: .host, level: 80, speaking: true),
        .init(name: "Bo", role: .moderator, muted: true),
        .init(name: "Chen", role: .speaker, level: 55),
        .init(name: "Dara", role: .speaker, level: 0),
    ]

    static let sketchAudience = [
        "Hana", "Ivo", "Jun", "Kai", "Lea", "Mio", "Noa", "Oli", "Pia", "Quinn", "Rui", "Sam", "Tove", "Uma",
        "Vik", "Wren", "Xia", "Yuki", "Zed",
    ]

    static func header(count: Int = 1204) -> RoomScreenModel.Header {
        .init(
            room: "lobby", topic: "Friday terminal hour", peopleCount: count,
            connection: .connected(roundTripMilliseconds: 18))
    }

    /// The status line's hints for a host or moderator, as the room screen's key table gives them.
    static func stageHints(muted: Bool) -> [KeyHint] {
        [
            KeyHint("?", "help"), KeyHint("m", muted ? "unmute" : "mute"), KeyHint("n", "invite next"),
            KeyHint("Enter", "actions"), KeyHint("/", "chat"), KeyHint("q", "leave"),
        ]
    }

    /// The status line's hints for a listener whose hand is up.
    static let handUpHints = [
        KeyHint("?", "help"), KeyHint("r", "lower hand"), KeyHint("/", "chat"), KeyHint("q", "leave"),
    ]

    /// The help as the room screen gave it when these goldens were drawn: its keys, then the main commands.
    static func helpLines(glyphs: Glyphs) -> [KeyHint] {
        let arrows = glyphs.arrows.allSatisfy { $0.count == 1 } ? glyphs.arrows.joined() : "arrows"
        let entries = [
            ("m", "mute / unmute yourself (speakers)"),
            ("space", "push to talk: hold, or tap to latch (speakers)"),
            ("r", "raise / lower your hand (audience)"),
            ("\(arrows) hjkl", "move the selection"),
            ("Enter", "actions for the selected peer"),
            ("i", "invite the selected peer to speak"),
            ("n", "invite the next raised hand"),
            ("a", "move the selected peer to the audience"),
            ("M", "mute the selected peer"),
            ("x", "remove the selected peer (asks first)"),
            ("+ -", "selected speaker louder / quieter (for you)"),
            ("/ or :", "open the command line"),
            ("Tab", "show / hide chat and events"),
            ("?", "show / hide this help"),
            ("q", "leave (hosts are asked first)"),
            ("", ""),
            ("", "Commands"),
            ("/chat TEXT", "say something to the room"),
            ("/invite NAME", "invite someone to speak"),
            ("/mute NAME", "mute someone"),
            ("/volume NAME", "with a percent 0-200: how loud they are to you"),
            ("/topic TEXT", "change the topic"),
            ("/end", "end the room (hosts; asks first)"),
        ]
        return entries.map { KeyHint($0.0, $0.1) }
    }

    /// The room in the UX sketch, seen by the moderator Bo.
    static func sketch() -> RoomScreenModel {
        RoomScreenModel(
            header: header(), stage: sketchStage,
            hands: .full([
                .init(position: 1, name: "Eli", waitingSeconds: 252),
                .init(position: 2, name: "Fay", waitingSeconds: 63),
                .init(position: 3, name: "Gus", waitingSeconds: 9),
            ]), audience: sketchAudience, audienceCount: 1197,
            status: .init(name: "Bo", role: .moderator, micMuted: true, hints: stageHints(muted: true)),
            selection: .stage(1))
    }

    static func names(_ count: Int) -> [String] {
        let first = [
            "Ada", "Ben", "Cleo", "Dev", "Emil", "Fern", "Gio", "Hugo", "Iris", "Jas", "Kit", "Lior", "Maya", "Nils",
            "Omar", "Pip", "Rosa", "Sven", "Tara", "Vera",
        ]
        return (0..<count).map { "\(first[$0 % first.count])\($0 / first.count + 1)" }
    }
}
