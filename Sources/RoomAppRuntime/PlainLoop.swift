import Foundation
import RoomApp
import RoomCore

/// Line mode (`--plain`), for screen readers and logs: prints what happens as sentences, one a line, and reads
/// commands (or chat) from its input, drawing nothing.
public final class PlainLoop {
    public private(set) var state: AppState
    private let connection: RoomConnection
    private var audioApplied: (mayPublish: Bool, muted: Bool)?
    private let output: (String) -> Void
    private let clock: () -> Timestamp
    private let inbox: Inbox<Item>

    enum Item: Sendable {
        case connection(ConnectionEvent)
        case line(String)
        case endOfInput
        case interrupt
    }

    public init(
        state: AppState, connection: RoomConnection, output: @escaping (String) -> Void,
        clock: @escaping () -> Timestamp = wallClock
    ) throws(RuntimeError) {
        self.state = state
        self.connection = connection
        self.output = output
        self.clock = clock
        self.inbox = try Inbox()
    }

    /// Asks the loop to leave the room, as Ctrl-C does; safe from any thread.
    public func interrupt() { inbox.post(.interrupt) }

    /// Runs until the session ends. `input` is called on a thread of its own and returns the next line, or
    /// `nil` at the end of input (which leaves the room).
    public func run(input: @escaping @Sendable () -> String?) -> LoopOutcome {
        let inbox = self.inbox
        connection.start { event in inbox.post(.connection(event)) }
        let reader = Thread {
            while let line = input() { inbox.post(.line(line)) }
            inbox.post(.endOfInput)
        }
        reader.start()
        var leaveAsked = false
        while true {
            inbox.wait(milliseconds: -1)
            for item in inbox.drain() {
                switch item {
                case .connection(.ended(let text)):
                    output(text)
                    connection.shutdown()
                    return state.room.hasJoined || leaveAsked ? .left : .failed(text)
                case .connection(let event):
                    apply(event)
                case .line(let line):
                    dispatch(.line(line, at: clock()))
                case .endOfInput, .interrupt:
                    if !leaveAsked {
                        leaveAsked = true
                        connection.leave()
                    }
                }
                if state.leaving && !leaveAsked {
                    leaveAsked = true
                    connection.leave()
                }
            }
        }
    }

    private func apply(_ event: ConnectionEvent) {
        let now = clock()
        switch event {
        case .roles(let roles): dispatch(.roles(roles))
        case .server(let event, let seq):
            let speakerBefore = state.activeSpeaker
            dispatch(.server(event, seq: seq, at: now))
            if case .speakers = event, let speaker = state.activeSpeaker, speaker != speakerBefore,
                let name = state.room.peers[speaker]?.name
            {
                output(speaker == state.room.selfID ? "You are speaking." : "\(name) is speaking.")
            }
        case .notice(let notice): dispatch(.notice(notice, at: now))
        case .microphone(let level): dispatch(.microphone(level: level))
        case .roundTrip(let milliseconds): dispatch(.roundTrip(milliseconds: milliseconds))
        case .volumes(let volumes):
            dispatch(.volumes(Dictionary(uniqueKeysWithValues: volumes.map { (PeerID($0.key), $0.value) })))
        case .ended: break
        }
    }

    private func dispatch(_ action: AppAction) {
        for effect in reduceApp(&state, action) {
            switch effect {
            case .send(.leave): break
            case .send(let request): connection.send(request)
            case .say(let sentence): output(sentence)
            case .setVolume(let peer, let percent): connection.setVolume(percent, for: peer)
            case .quit: break
            }
        }
        syncAudio()
    }

    /// Tells the connection's sound when the person's right to speak or their mute changed.
    private func syncAudio() {
        guard let me = state.room.me else { return }
        let mayPublish = state.room.roles.can(me.role, .publishAudio)
        if let applied = audioApplied, applied.mayPublish == mayPublish, applied.muted == me.muted { return }
        audioApplied = (mayPublish, me.muted)
        connection.setAudio(mayPublish: mayPublish, muted: me.muted)
    }
}
