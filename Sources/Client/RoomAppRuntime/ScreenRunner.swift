import RoomCore
import TermUI

/// What the screen runner shows: the room or the lobby, as a store the runner feeds (the time, the screen's size,
/// the keys) and draws from. Each is a few lines over its driver; everything else is the runner's.
protocol ScreenShow: AnyObject {
    associatedtype Model: Equatable
    /// Whether this run of the screen is over: the store asked to quit, a stop was asked for, or (the lobby) a
    /// room is to be entered.
    var isDone: Bool { get }
    /// Bumped by the reducer on every change of the state.
    var revision: UInt64 { get }
    /// The next moment the screen changes by itself, if any.
    var nextWakeup: Timestamp? { get }
    /// The shortest time between two frames; 0 draws every change at once.
    var frameInterval: Timestamp { get }
    /// The time for an action made now.
    var now: Timestamp { get }
    /// The descriptor of the store's inbox.
    var wakeDescriptor: Int32 { get }
    /// Applies what was posted to the store.
    func applyPending()
    func tick(_ now: Timestamp)
    func resize(width: Int, height: Int)
    func press(_ key: Key)
    /// What the screen shows for the state now.
    func model() -> Model
    func render(_ model: Model, into buffer: inout CellBuffer)
}

/// The one screen runner, under the room and the lobby: it draws a frame only when the screen would change (at
/// most one per `frameInterval`), and between frames sleeps in `poll` until a key, something posted to the
/// store, or the next moment the screen must change by itself (a level bar falling, a notice expiring), which it
/// tells the store as a tick. A size it has not drawn at is told to the store as a resize, and the frame after it
/// is drawn whole.
final class ScreenRunner<Model: Equatable> {
    /// Frames drawn (a frame is drawn only when the screen model changed).
    private(set) var frames = 0
    /// Times the runner woke up.
    private(set) var wakeups = 0
    private var drawn: Model?
    private var drawnRevision: UInt64 = .max
    private var drawnAt: Timestamp?
    private var width = -1
    private var height = -1
    private var buffer = CellBuffer(width: 0, height: 0)

    /// Draws the next frame whole, the size told again: something else drew on the screen, or the program was
    /// suspended.
    func redrawWhole() {
        width = -1
        height = -1
    }

    /// Runs `show` on `sink` until it is done.
    func run<Show: ScreenShow>(_ show: Show, on sink: FrameSink) where Show.Model == Model {
        while true {
            wakeups += 1
            show.applyPending()
            if show.isDone { return }
            var now = show.now
            if let wake = show.nextWakeup, wake <= now { show.tick(now) }
            fitSize(show, sink)
            var deadline = show.nextWakeup
            if show.revision != drawnRevision {
                if show.frameInterval == 0 || drawnAt.map({ now - $0 >= show.frameInterval }) ?? true {
                    let model = show.model()
                    if model != drawn { draw(model, show, sink, at: now) }
                    drawnRevision = show.revision
                } else {
                    let next = (drawnAt ?? now) + show.frameInterval
                    deadline = min(deadline ?? next, next)
                }
            }
            now = show.now
            let timeout = deadline.map { Int(max(0, $0 - now)) } ?? -1
            let keys = sink.waitForKeys(milliseconds: timeout, wakeDescriptor: show.wakeDescriptor)
            for key in keys where !show.isDone {
                if key == .resize { continue }
                show.press(key)
            }
        }
    }

    /// Draws `show` now, whatever was drawn before (the lobby's "joining…" before a room takes the screen).
    func drawNow<Show: ScreenShow>(_ show: Show, on sink: FrameSink) where Show.Model == Model {
        fitSize(show, sink)
        draw(show.model(), show, sink, at: show.now)
        drawnRevision = show.revision
    }

    private func fitSize<Show: ScreenShow>(_ show: Show, _ sink: FrameSink) where Show.Model == Model {
        guard sink.width != width || sink.height != height else { return }
        width = sink.width
        height = sink.height
        show.resize(width: width, height: height)
        buffer = CellBuffer(width: max(0, width), height: max(0, height))
        drawn = nil
        drawnAt = nil
    }

    private func draw<Show: ScreenShow>(_ model: Model, _ show: Show, _ sink: FrameSink, at now: Timestamp)
    where Show.Model == Model {
        show.render(model, into: &buffer)
        sink.draw(buffer)
        frames += 1
        drawn = model
        drawnAt = now
    }
}
