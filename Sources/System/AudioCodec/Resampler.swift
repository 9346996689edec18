internal import CSpeexDSP

/// Converts mono 16-bit audio between sample rates (speexdsp's resampler), for devices that cannot run at
/// 48 kHz. Does not allocate after `init`. One thread at a time.
public final class Resampler {
    /// The rate of the samples going in.
    public let inputRate: Int
    /// The rate of the samples coming out.
    public let outputRate: Int
    private let state: OpaquePointer

    /// Creates a resampler; `quality` runs from 0 (cheapest) to 10 (best); 5 suits speech on a desktop.
    public init(inputRate: Int, outputRate: Int, quality: Int = 5) throws(AudioCodecError) {
        let place = "Resampler.init"
        guard inputRate > 0, outputRate > 0, (0...10).contains(quality) else {
            throw .invalidSetting(
                place: place,
                detail: "rates must be positive and quality in 0...10 (got \(inputRate) → "
                    + "\(outputRate), quality \(quality))")
        }
        var error: Int32 = 0
        guard
            let state = speex_resampler_init(1, UInt32(inputRate), UInt32(outputRate), Int32(quality), &error),
            error == 0
        else {
            let detail = speex_resampler_strerror(error).map { String(cString: $0) } ?? "unknown error"
            throw .speex(place: place, detail: detail)
        }
        self.state = state
        self.inputRate = inputRate
        self.outputRate = outputRate
        // The filter's start-up delay would otherwise appear as leading zeros in the output.
        speex_resampler_skip_zeros(state)
    }

    deinit {
        speex_resampler_destroy(state)
    }

    /// The most output samples `count` input samples can produce; size output buffers with it.
    public func maximumOutputCount(forInput count: Int) -> Int {
        (count * outputRate + inputRate - 1) / inputRate + 2
    }

    /// Resamples as much of `input` as fits in `output`; returns how many samples were consumed and written.
    public func process(
        _ input: UnsafeBufferPointer<Int16>, into output: UnsafeMutableBufferPointer<Int16>
    ) throws(AudioCodecError) -> (consumed: Int, produced: Int) {
        guard !input.isEmpty, !output.isEmpty else { return (0, 0) }
        var consumed = UInt32(input.count)
        var produced = UInt32(output.count)
        let code = speex_resampler_process_int(
            state, 0, input.baseAddress, &consumed, output.baseAddress, &produced)
        guard code == 0 else {
            let detail = speex_resampler_strerror(code).map { String(cString: $0) } ?? "unknown error"
            throw .speex(place: "Resampler.process", detail: detail)
        }
        return (Int(consumed), Int(produced))
    }

    /// Resamples a whole array; convenient for tests and tools, allocates.
    public func process(_ input: [Int16]) throws(AudioCodecError) -> [Int16] {
        var output = [Int16](repeating: 0, count: maximumOutputCount(forInput: input.count))
        var produced = 0
        var offset = 0
        try input.withUnsafeBufferPointer { source throws(AudioCodecError) in
            try output.withUnsafeMutableBufferPointer { target throws(AudioCodecError) in
                while offset < source.count && produced < target.count {
                    let (consumed, made) = try process(
                        UnsafeBufferPointer(rebasing: source[offset...]),
                        into: UnsafeMutableBufferPointer(rebasing: target[produced...]))
                    if consumed == 0 && made == 0 { break }
                    offset += consumed
                    produced += made
                }
            }
        }
        output.removeSubrange(produced...)
        return output
    }
}
