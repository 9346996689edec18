import Foundation
import RoomProtocol
import Synchronization

/// What takes a session's media traffic: the server's media messages, the media that comes over the WebSocket,
/// and the control connection to send on.
public protocol MediaReceiver: AnyObject, Sendable {
    /// A media message from the server (`media`, `media_key`, `media_sources`).
    func handle(_ signal: MediaSignal)
    /// A binary WebSocket message from the server: media on the fallback path.
    func receivedOverWebSocket(_ bytes: [UInt8])
    /// The control connection that media travels on when UDP does not get through.
    func attach(_ channel: MediaChannel)
}

/// The glue between a session's control connection and the client's media, written once for the room screen,
/// bots and the demo's voices: each `media` offer (one per connection, so again after every reconnect) starts a
/// `ClientMedia` in place of the previous one; room keys, WebSocket media and who sends with which SSRC go to the
/// current one; the local volumes and the sources it was told about carry over to the next.
public final class ClientMediaSlot: MediaReceiver {
    private let options: ClientMedia.Options
    private let onEvent: @Sendable (ClientMediaEvent) -> Void
    private let onFailure: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State: Sendable {
        var channel = MediaChannel.none
        var media: ClientMedia?
        var closed = false
        var volumes: [String: Int] = [:]
        var listenOnly = false
        var sources: [UInt32: String] = [:]
        /// What earlier engines recorded, in order.
        var recorded: [Int16] = []
    }

    /// Media started with `options` for every offer; `onEvent` hears every engine's events (on its media thread),
    /// `onFailure` why an engine could not start.
    public init(
        options: ClientMedia.Options, onEvent: @escaping @Sendable (ClientMediaEvent) -> Void = { _ in },
        onFailure: @escaping @Sendable (String) -> Void
    ) {
        self.options = options
        self.onEvent = onEvent
        self.onFailure = onFailure
    }

    /// The control connection that media travels on when UDP does not get through.
    public func attach(_ channel: MediaChannel) {
        state.withLock { $0.channel = channel }
    }

    /// A media message from the server.
    public func handle(_ signal: MediaSignal) {
        switch signal {
        case .media(let offer):
            start(offer)
        case .mediaKey(let key, let epoch):
            state.withLock { $0.media }?.newRoomKey(key, epoch: epoch)
        case .mediaSources(let sources):
            let media = state.withLock { state -> ClientMedia? in
                for source in sources { state.sources[source.ssrc] = source.peer }
                return state.media
            }
            media?.setSources(sources)
        case .mediaPath:
            // Only clients say which path they use.
            break
        }
    }

    /// A binary WebSocket message from the server: media on the fallback path.
    public func receivedOverWebSocket(_ bytes: [UInt8]) {
        state.withLock { $0.media }?.receivedOverWebSocket(bytes)
    }

    /// Sets every peer's local volume (percent by identity), now and for the engines that follow.
    public func setVolumes(_ volumes: [String: Int]) {
        let media = state.withLock { state -> ClientMedia? in
            state.volumes = volumes
            return state.media
        }
        media?.setVolumes(volumes)
    }

    /// Whether only the loudspeaker is open (see `ClientMedia.setListenOnly`), now and for the engines that follow.
    public func setListenOnly(_ listenOnly: Bool) {
        let media = state.withLock { state -> ClientMedia? in
            state.listenOnly = listenOnly
            return state.media
        }
        media?.setListenOnly(listenOnly)
    }

    /// Who sends with which SSRC, as the server has said so far.
    public var sources: [UInt32: String] { state.withLock { $0.sources } }

    /// The current engine, if an offer has started one.
    public var media: ClientMedia? { state.withLock { $0.media } }

    /// Stops the current engine and starts no more; returns everything recorded (48 kHz mono).
    @discardableResult
    public func close() -> [Int16] {
        let (media, recorded) = state.withLock { state in
            defer {
                state.media = nil
                state.closed = true
                state.recorded = []
            }
            return (state.media, state.recorded)
        }
        return recorded + (media?.stop() ?? [])
    }

    private func start(_ offer: MediaOffer) {
        let (old, channel) = state.withLock { state in
            defer { state.media = nil }
            return (state.media, state.channel)
        }
        if let old {
            let samples = old.stop()
            state.withLock { $0.recorded += samples }
        }
        let media: ClientMedia
        do {
            media = try ClientMedia(offer: offer, options: options, channel: channel, onEvent: onEvent)
        } catch {
            onFailure("media could not start: \(error)")
            return
        }
        let (kept, volumes, sources, listenOnly) = state.withLock { state in
            guard !state.closed else { return (false, [String: Int](), [UInt32: String](), false) }
            state.media = media
            return (true, state.volumes, state.sources, state.listenOnly)
        }
        guard kept else { return }
        media.setListenOnly(listenOnly)
        media.setVolumes(volumes)
        media.setSources(sources.map { MediaSource(peer: $0.value, ssrc: $0.key) })
        media.start()
    }
}
