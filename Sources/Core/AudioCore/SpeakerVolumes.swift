/// The local volume of each speaker a client hears: volumes are kept per identity (what a person chose for
/// "ana" stays for "ana"), while the media plane knows speakers only by the SSRC their packets carry. The
/// server's `media_sources` says which identity sends with which SSRC; this table joins the two.
///
/// A speaker whose SSRC is not named yet, or whose identity has no volume, plays at 100 %.
public struct SpeakerVolumes: Sendable, Equatable {
    /// Volumes in percent (0–200) by identity; an identity that is absent plays at 100 %.
    public private(set) var volumes: [String: Int] = [:]
    /// Who sends with which SSRC.
    public private(set) var sources: [UInt32: String] = [:]

    /// An empty table: everyone at 100 %.
    public init() {}

    /// A table with these volumes by identity (clamped to 0–200 %).
    public init(volumes: [String: Int], sources: [UInt32: String] = [:]) {
        for (peer, percent) in volumes { setVolume(percent, for: peer) }
        self.sources = sources
    }

    /// Sets the volume of `peer` in percent, clamped to 0–200; 100 removes the entry.
    public mutating func setVolume(_ percent: Int, for peer: String) {
        let clamped = min(200, max(0, percent))
        volumes[peer] = clamped == 100 ? nil : clamped
    }

    /// Replaces every volume.
    public mutating func setVolumes(_ volumes: [String: Int]) {
        self.volumes = [:]
        for (peer, percent) in volumes { setVolume(percent, for: peer) }
    }

    /// Notes that `peer` sends with `ssrc` (a later entry for the same SSRC wins).
    public mutating func setSource(ssrc: UInt32, peer: String) {
        sources[ssrc] = peer
    }

    /// The volume in percent of whoever sends with `ssrc`.
    public func percent(ssrc: UInt32) -> Int {
        guard let peer = sources[ssrc] else { return 100 }
        return volumes[peer] ?? 100
    }

    /// The mixer gain for whoever sends with `ssrc` (`Mixer.gain(percent:)`).
    public func gain(ssrc: UInt32) -> Float {
        Mixer.gain(percent: percent(ssrc: ssrc))
    }
}
