/// Where the room's sound goes once it is mixed as a listener hears it: a recording's file, a live stream.
///
/// A recorder mixes every speaker it receives and hands each 20 ms frame to each of its outputs in turn; silence
/// is handed on too, so every output keeps the room's timeline.
public protocol MixOutput: AnyObject {
    /// One 20 ms frame (`AudioFormat.samplesPerFrame` mono samples at 48 kHz) of the room as a listener hears it;
    /// `offset` is the frame's start on the recording's timeline, in milliseconds from its first frame.
    func write(_ frame: [Int16], offset: Int64) throws
    /// Writes what is still held and releases the output; nothing is written after it.
    func close() throws
}
