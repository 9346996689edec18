import Foundation
import RoomApp
import RoomCore
import TermUI
import Testing

@testable import TermUI

/// The room view's key table and the views made from it: dispatch, the help, the status line's hints and the
/// key table of docs/ui.md.
@Suite struct KeyBindingTests {
    /// docs/ui.md, in the package this file is in.
    static let interfaceDocs = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/ui.md")

    /// With `UPDATE_DOCS=1` in the environment, the table in docs/ui.md is rewritten from the key table instead.
    @Test func theDocsKeyTableIsTheGeneratedOne() throws {
        var lines = try String(contentsOf: Self.interfaceDocs, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "| key | does | refused with |"), "docs/ui.md has no key table")
        let end = lines[start...].firstIndex { !$0.hasPrefix("|") } ?? lines.endIndex
        let generated = KeyBindings.markdownTable.split(separator: "\n").map(String.init)
        if ProcessInfo.processInfo.environment["UPDATE_DOCS"] == "1" {
            lines.replaceSubrange(start..<end, with: generated)
            try lines.joined(separator: "\n").write(to: Self.interfaceDocs, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            Array(lines[start..<end]) == generated, "rewrite it with UPDATE_DOCS=1 swift test --filter KeyBindingTests")
    }

    /// The lobby's key table of docs/ui.md is made from `DialogKeys.lobby`, as the room's is from its table.
    @Test func theDocsLobbyKeyTableIsTheGeneratedOne() throws {
        var lines = try String(contentsOf: Self.interfaceDocs, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "| lobby key | does |"), "docs/ui.md has no lobby key table")
        let end = lines[start...].firstIndex { !$0.hasPrefix("|") } ?? lines.endIndex
        let generated = DialogKeys.lobbyMarkdownTable.split(separator: "\n").map(String.init)
        if ProcessInfo.processInfo.environment["UPDATE_DOCS"] == "1" {
            lines.replaceSubrange(start..<end, with: generated)
            try lines.joined(separator: "\n").write(to: Self.interfaceDocs, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            Array(lines[start..<end]) == generated, "rewrite it with UPDATE_DOCS=1 swift test --filter KeyBindingTests")
        #expect(generated.contains("| `q` `Ctrl-C` | quit |"), "\(generated)")
    }

    /// Every key of the lobby's table does something there; a key outside it says what to press.
    @Test func everyLobbyKeyIsDispatchedFromTheTable() {
        var seen = Set<Key>()
        for binding in DialogKeys.lobby {
            for key in binding.keys {
                #expect(!seen.contains(key), "\(key) is bound twice in the lobby")
                seen.insert(key)
                var state = LobbyState(server: "rooms.example.org")
                let effects = reduceLobby(&state, .key(key, at: t0))
                #expect(state.notice?.text.contains("does nothing") != true, "\(key)")
                #expect(effects.contains(.quit) == (binding.action == .quit), "\(key)")
                #expect(effects.contains(.refresh) == (binding.action == .refresh), "\(key)")
            }
        }
        var state = LobbyState(server: "rooms.example.org")
        _ = reduceLobby(&state, .key(.char("z"), at: t0))
        #expect(state.notice?.text == "The key z does nothing here; press ? for the keys.")
    }

    @Test func everyKeyHasOneMeaningAndEveryCommandAKey() {
        var seen: [Key: KeyCommand] = [:]
        for binding in KeyBindings.room {
            for key in binding.keys + binding.alternatives {
                #expect(seen[key] == nil, "\(key) is bound twice")
                seen[key] = binding.command
                #expect(KeyBindings.command(for: key) == binding.command)
            }
        }
        #expect(Set(KeyBindings.room.map(\.command)) == Set(KeyCommand.allCases))
        #expect(KeyBindings.room.count == KeyCommand.allCases.count)
        #expect(KeyBindings.command(for: .char("z")) == nil)
    }

    @Test func everyBoundKeyDoesSomethingAndOthersPointToHelp() {
        for binding in KeyBindings.room {
            for key in binding.keys + binding.alternatives {
                var state = joined(as: "bo")
                let said = send(&state, .key(key, at: t0))[0]
                #expect(!said.contains { if case .say(let s) = $0 { s.contains("does nothing") } else { false } })
            }
        }
        var state = joined(as: "bo")
        #expect(send(&state, char("z"))[0] == [.say("The key z does nothing here; press ? for the keys.")])
    }

    @Test func theHelpListsEveryRowInTheTablesOrderThenTheCommands() {
        let lines = KeyBindings.helpLines(glyphs: .unicode)
        #expect(
            Array(lines.prefix(KeyBindings.room.count))
                == KeyBindings.room.map { KeyHint(KeyBindings.label($0.keys, glyphs: .unicode), $0.help) })
        #expect(
            lines.prefix(9).map(\.key) == ["m", "space", "r", "↑↓←→ hjkl", "Enter", "i", "n", "w", "a"])
        #expect(lines.map(\.key).contains("+ -"))
        #expect(lines.map(\.key).contains("/ :"))
        #expect(
            lines.dropFirst(KeyBindings.room.count).prefix(3).map(\.action) == [
                "", "In the actions menu (Enter)", PeerAction.allCases[0].help,
            ])
        // The actions menu's entries, every dialog's keys and every command follow, each from its table.
        for action in PeerAction.allCases { #expect(lines.contains(KeyHint(action.key, action.help))) }
        for dialog in DialogKeys.all {
            #expect(lines.contains(KeyHint("", dialog.title)))
            for row in dialog.bindings {
                #expect(lines.contains(KeyHint(KeyBindings.label(row.keys, glyphs: .unicode), row.help)))
            }
        }
        let commands = Array(lines.suffix(Command.usages.count))
        #expect(commands == Command.usages.map { KeyHint($0.usage, $0.summary) })
        for usage in [
            "/dm NAME TEXT", "/who", "/leave", "/move NAME ROLE", "/remove NAME [--link] [REASON]", "/to ROLE TEXT",
        ] {
            #expect(commands.contains { $0.key == usage }, "\(usage)")
        }
        #expect(KeyBindings.helpLines(glyphs: .ascii)[3].key == "arrows hjkl")
        // Opened from the room, the overlay shows these lines.
        var state = joined(as: "hana")
        send(&state, char("?"))
        #expect(RoomScreenMapper.model(state).overlay == .help(lines: lines, scroll: 0))
    }

    @Test func everyHelpRowFitsAt80Columns() {
        // The help's area on an 80x24 screen: below the header, above the rule and the status line.
        let lines = KeyBindings.helpLines(glyphs: .unicode)
        let theme = Theme(level: .none, ascii: false)
        var seen = ""
        var screens: [[String]] = []
        for scroll in 0..<(2 * lines.count) {
            var buffer = CellBuffer(width: 80, height: 21)
            HelpOverlay(lines: lines, scroll: scroll).render(into: &buffer, area: buffer.area, theme: theme)
            let rows = buffer.lines()
            if screens.last == rows { break }
            screens.append(rows)
            seen += rows.joined(separator: " ")
        }
        // Nothing is cut: the only ellipsis is the one that says more is below, and never on the last screen.
        for (index, rows) in screens.enumerated() {
            let marks = rows.joined().filter { $0 == "…" }.count
            #expect(marks == (index == screens.count - 1 ? 0 : 1), "\(rows.joined(separator: "\n"))")
            // The mark takes a column of its own, never a row's last character.
            #expect(marks == 0 || rows.contains { $0.hasSuffix(" … │") }, "\(rows.joined(separator: "\n"))")
        }
        for line in lines {
            for word in (line.key + " " + line.action).split(separator: " ") {
                // The screen keeps no variation selectors (they take no cell).
                let drawn = String(String.UnicodeScalarView(word.unicodeScalars.filter { $0.value != 0xFE0F }))
                #expect(seen.contains(drawn), "\(word) of \(line.key)")
            }
        }
    }

    @Test func statusHintsFollowTheRole() {
        func hints(_ status: RoomScreenModel.StatusLine, unread: Int = 0) -> [KeyHint] {
            KeyBindings.hints(for: status, unreadChat: unread)
        }
        #expect(hints(.init(name: "Fay", role: .audience)).map(\.key) == ["?", "r", "c", "q"])
        #expect(hints(.init(name: "Fay", role: .audience, handRaised: true))[1] == KeyHint("r", "lower hand"))
        let host = hints(.init(name: "Ana", role: .host, micMuted: true), unread: 3)
        #expect(host.map(\.key) == ["?", "Tab", "m", "n", "Enter", "c", "q"])
        #expect(host[2].action == "unmute" && host[1].action == "chat (3)")
        let speaker = hints(.init(name: "Chen", role: .speaker, micMuted: false)).map(\.action)
        #expect(speaker == ["help", "mute", "talk", "chat", "leave"])
        #expect(
            hints(.init(name: "Bo", role: .moderator, micMuted: false)).map(\.key) == [
                "?", "m", "n", "Enter", "c", "q",
            ])
        #expect(
            hints(.init(name: "Chen", role: .speaker, micMuted: false), unread: 1200)[1]
                == KeyHint("Tab", "chat (1,200)"))
    }

    @Test func statusHintsOnceTheRoomIsOverOfferOnlyWhatStillWorks() {
        let over = KeyBindings.hints(
            for: .init(name: "Ana", role: .host, micMuted: false, roomOver: true), unreadChat: 2)
        #expect(over.map(\.key) == ["?", "Tab", "q"])
    }

    @Test func theScreensStatusLineCarriesTheHintsOfTheTable() {
        var state = joined(as: "chen")
        #expect(
            RoomScreenMapper.model(state).status.hints == [
                KeyHint("?", "help"), KeyHint("m", "mute"), KeyHint("space", "talk"), KeyHint("c", "chat"),
                KeyHint("q", "leave"),
            ])
        let message = ChatMessage(from: "eli", fromName: "Eli", text: "hi", sentAt: t0)
        send(&state, key(.tab), .server(.chat(message), seq: 11, at: t0))
        #expect(RoomScreenMapper.model(state).status.hints[1] == KeyHint("Tab", "chat (1)"))
        send(&state, key(.tab))
        #expect(!RoomScreenMapper.model(state).status.hints.contains { $0.key == "Tab" })
    }

    @Test func keysReadAsPeopleTypeThem() {
        #expect(KeyBindings.name(of: .char(" "), glyphs: .unicode) == "space")
        #expect(KeyBindings.name(of: .ctrl("c"), glyphs: .unicode) == "Ctrl-C")
        #expect(KeyBindings.name(of: .function(1), glyphs: .unicode) == "F1")
        #expect(KeyBindings.name(of: .pageDown, glyphs: .unicode) == "PgDn")
        #expect(KeyBindings.name(of: .up, glyphs: .ascii) == "Up")
        #expect(KeyBindings.label([.char("+"), .char("-")], glyphs: .unicode) == "+ -")
        #expect(KeyBindings.label([.char("M")], glyphs: .unicode) == "M")
        #expect(KeyBindings.label([.up, .down, .left, .right, .char("h"), .char("l")], glyphs: .unicode) == "↑↓←→ hl")
    }
}

@Suite struct TerminalHabitKeyTests {
    @Test func ctrlZSuspendsFromTheRoomViewAndTheInvitation() {
        var state = joined(as: "ana")
        #expect(send(&state, key(.ctrl("z"))) == [[.suspend]])
    }
}
