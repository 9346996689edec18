import ClientAudio
import Dispatch
import Foundation
import MediaTransport
import Platform
import RoomClient
import RoomCore
import RoomProtocol
import ServerBenchmarks
import Synchronization

/// Why a through-server benchmark could not run.
public struct PathBenchmarkError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// One client's connection as the product makes it: a `RoomSession` whose media messages go to `media` (a
/// `RoomAudio` or a `ClientMediaSlot` owned by the caller). With a relay link, the `media` offer is changed to
/// send to an ``ImpairingRelay`` in front of the server, started on the offer's arrival.
final class BenchClient: Sendable {
    let identity: String
    let session: RoomSession
    private let joined = DispatchSemaphore(value: 0)
    private let unmuted = DispatchSemaphore(value: 0)
    private let relayState = Locked<ImpairingRelay?>(nil)
    private let failure = Locked<String?>(nil)
    /// Every network quality score this client was sent, in order.
    private let qualityLog = Locked<[PeerQuality]>([])

    convenience init(
        room: BenchServer, identity: String, role: String, relay link: LinkImpairment?,
        media: @escaping @Sendable (SessionMedia) -> Void
    ) throws {
        try self.init(
            url: room.url, token: try room.token(identity, role: role), identity: identity, relay: link,
            media: media)
    }

    /// A client of the room at `url` (a server anywhere) with `token`; `keepsRecords` as the relay's.
    init(
        url: String, token: String, identity: String, relay link: LinkImpairment?, keepsRecords: Bool = true,
        media: @escaping @Sendable (SessionMedia) -> Void
    ) throws {
        self.identity = identity
        let joined = joined
        let unmuted = unmuted
        let failure = failure
        let relayState = relayState
        let qualityLog = qualityLog
        session = try RoomSession(
            url: url, token: token,
            media: { message in
                guard let link, case .signal(.media(var offer)) = message else {
                    media(message)
                    return
                }
                guard let server = UDPAddress(host: offer.host, port: UInt16(clamping: offer.port)),
                    let relay = try? ImpairingRelay(server: server, link: link, keepsRecords: keepsRecords)
                else {
                    failure.withLock { $0 = "the relay could not start" }
                    return
                }
                relay.start()
                let previous = relayState.withLock { state -> ImpairingRelay? in
                    defer { state = relay }
                    return state
                }
                previous?.stop()
                offer.host = "127.0.0.1"
                offer.port = Int(relay.address.port)
                media(.signal(.media(offer)))
            },
            handler: { event in
                switch event {
                case .message(let message):
                    switch message.event {
                    case .joined: joined.signal()
                    case .muteChanged(let peer, false, _) where peer.rawValue == identity: unmuted.signal()
                    case .networkQuality(let peers): qualityLog.withLock { $0 += peers }
                    default: break
                    }
                case .ended(let end): failure.withLock { $0 = "\(identity)'s session ended: \(end)" }
                default: break
                }
            })
    }

    /// The network quality scores this client was sent so far, in order.
    var qualities: [PeerQuality] { qualityLog.withLock { $0 } }

    /// The relay in front of this client, once the offer came.
    var relay: ImpairingRelay? { relayState.withLock { $0 } }

    /// Connects and waits for the room's snapshot.
    func join() throws {
        session.start()
        guard joined.wait(timeout: .now() + 10) == .success else {
            throw PathBenchmarkError(failure.withLock { $0 } ?? "\(identity) could not join within 10 s")
        }
    }

    /// Asks the server to unmute this client and waits until it has.
    func unmute() throws {
        // The snapshot can come before the session has its connection ready for sending: try until it takes.
        for _ in 0..<200 where !session.send(.setMute(false)) { MonotonicClock.sleep(microseconds: 10_000) }
        guard unmuted.wait(timeout: .now() + 10) == .success else {
            throw PathBenchmarkError(failure.withLock { $0 } ?? "\(identity) was not unmuted within 10 s")
        }
    }

    /// Leaves, stops the relay and the session's thread.
    func close() {
        session.leave()
        MonotonicClock.sleep(microseconds: 50_000)
        relayState.withLock { $0 }?.stop()
        session.shutdown()
    }
}

/// A value behind a lock that closures can share.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}
