import ClientAudio
import Foundation
import ProcessSignals
import RoomApp
import RoomCore
import Synchronization
import TermCurses
import TermUI

/// The replay of a recording on the terminal (`clubroom replay`): the room screen as it was, or the line mode's
/// sentences at their times, while a `ReplayPlayer` plays the audio. What a key does is `reduceReplay`'s; these
/// only carry its effects to the player and the player's position back.
public enum ReplayFront {
    /// How often the line mode looks at where the audio is, in milliseconds.
    static let linePeriod: UInt32 = 20

    /// The replay on the terminal's screen until `q` (or Ctrl-C), SIGTERM or SIGHUP, or a loudspeaker that fails;
    /// the terminal is restored however it ends. Returns why it stopped by itself, if it did.
    public static func screen(_ state: ReplayState, player: ReplayPlayer) async throws -> String? {
        try await Task.detached { () throws -> String? in
            try FrontEnds.onTerminal(logName: "replay") { terminal in
                let show = ReplayShow(
                    state, player: player, theme: Theme(level: terminal.colorLevel, ascii: state.ascii))
                let stopAsked = show.stopAsked
                let watcher = SignalWatcher([.terminate, .hangUp]) { _ in stopAsked.raise() }
                defer { watcher.cancel() }
                player.start()
                ScreenRunner<ReplayScreenModel>().run(show, on: TerminalSink(terminal))
                player.stop()
                return player.failure
            }
        }.value
    }

    /// The replay in line mode: the opening, then each event's sentence when the audio reaches it, to `output`,
    /// until the end (or Ctrl-C, SIGTERM). Returns why it stopped by itself, if it did.
    public static func lines(
        _ state: ReplayState, player: ReplayPlayer, output: @escaping @Sendable (String) -> Void
    )
        async -> String?
    {
        await Task.detached { () -> String? in
            let stopAsked = StopFlag()
            let watcher = SignalWatcher([.interrupt, .terminate]) { _ in stopAsked.raise() }
            defer { watcher.cancel() }
            for line in ReplayText.opening(state) { output(line) }
            // Events at the very start are told too; the stage as it began is in the opening.
            var told: Int64 = -1
            player.start()
            defer { player.stop() }
            while !stopAsked.isRaised {
                if let failure = player.failure { return failure }
                let ended = player.ended
                let position = ended ? Int64.max : player.position
                for line in ReplayText.lines(state, after: told, through: position) { output(line) }
                told = position
                if ended {
                    output(ReplayText.ending(state))
                    return nil
                }
                usleep(linePeriod * 1000)
            }
            return nil
        }.value
    }
}

/// The replay as the screen runner shows it.
private final class ReplayShow: ScreenShow {
    private var state: ReplayState
    private let player: ReplayPlayer
    private let theme: Theme
    let stopAsked = StopFlag()
    private(set) var revision: UInt64 = 0

    init(_ state: ReplayState, player: ReplayPlayer, theme: Theme) {
        self.state = state
        self.player = player
        self.theme = theme
    }

    var isDone: Bool { state.quitting || stopAsked.isRaised || player.failure != nil }
    // The position line moves every second while playing; the stage as often as talk starts and stops.
    var nextWakeup: Timestamp? { now + (state.paused || state.ended ? 250 : 50) }
    var frameInterval: Timestamp { 33 }
    var now: Timestamp { wallClock() }
    var wakeDescriptor: Int32 { -1 }

    func applyPending() {
        let before = state
        if player.ended, !state.ended {
            _ = reduceReplay(&state, .ended)
        } else if !state.ended {
            _ = reduceReplay(&state, .position(player.position))
        }
        if state != before { revision += 1 }
    }

    func tick(_ now: Timestamp) { applyPending() }
    func resize(width: Int, height: Int) { revision += 1 }

    func press(_ key: Key) {
        for effect in reduceReplay(&state, .key(key)) {
            switch effect {
            case .pause: player.pause()
            case .resume: player.resume()
            case .seek(let offset): player.seek(to: offset)
            case .quit: break
            }
        }
        revision += 1
    }

    func model() -> ReplayScreenModel { ReplayText.model(state) }

    func render(_ model: ReplayScreenModel, into buffer: inout CellBuffer) {
        ReplayScreen.render(model, into: &buffer, theme: theme)
    }
}

/// A stop asked for from a signal's thread.
private final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .relaxed) }
    var isRaised: Bool { raised.load(ordering: .relaxed) }
}
