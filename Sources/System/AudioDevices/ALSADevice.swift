import AudioCodec
import AudioCore
internal import CALSA
import Glibc

/// How an ALSA device is opened. The defaults are what Clubroom uses.
public struct ALSAOptions: Sendable, Equatable {
    /// The rate asked of the device. Clubroom's format is 48 kHz; when the device offers another rate the
    /// samples are resampled (speexdsp) on the way. Another value here forces that path, for devices known to
    /// misbehave at 48 kHz, and for tests.
    public var rate: Int
    /// Length of one ALSA period: how often the device wakes the audio thread.
    public var periodMilliseconds: Int
    /// Periods in the ALSA buffer: the most audio that can queue up in the device. Four ride out a late wake-up
    /// without adding much delay.
    public var bufferPeriods: Int
    /// ALSA configuration text that defines the device's name (for example
    /// `pcm.mic { type file; slave.pcm { type null }; infile "in.raw" }`), used instead of the system's
    /// configuration. `nil` opens the name through the system's configuration, as `aplay -D` would.
    public var configuration: String?

    /// Creates options; every parameter has Clubroom's default.
    public init(
        rate: Int = AudioFormat.sampleRate, periodMilliseconds: Int = AudioFormat.periodMilliseconds,
        bufferPeriods: Int = 4, configuration: String? = nil
    ) {
        self.rate = rate
        self.periodMilliseconds = periodMilliseconds
        self.bufferPeriods = bufferPeriods
        self.configuration = configuration
    }
}

/// A microphone (or any ALSA capture PCM) delivering 48 kHz mono periods.
public final class ALSAInput: AudioInput {
    public var name: String { handle.name }
    /// The rate the device actually runs at; not 48 kHz means the input is resampled.
    public var deviceRate: Int { handle.deviceRate }
    private let handle: PCMHandle

    /// Opens and prepares the capture PCM `name` (`default`, `hw:1,0`, `pulse`, …).
    public init(name: String, options: ALSAOptions = ALSAOptions()) throws(AudioDeviceError) {
        handle = try PCMHandle(name: name, direction: .capture, options: options)
    }

    /// False for a sound server's plugin (PulseAudio's or PipeWire's `pulse`, `pipewire`, JACK's `jack`).
    public var suitsRealTimePriority: Bool { !handle.isSoundServerPlugin }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        try handle.read(into: buffer)
    }
}

/// A loudspeaker (or any ALSA playback PCM) taking 48 kHz mono periods.
public final class ALSAOutput: AudioOutput {
    public var name: String { handle.name }
    /// The rate the device actually runs at; not 48 kHz means the output is resampled.
    public var deviceRate: Int { handle.deviceRate }
    private let handle: PCMHandle

    /// Opens and prepares the playback PCM `name`.
    public init(name: String, options: ALSAOptions = ALSAOptions()) throws(AudioDeviceError) {
        handle = try PCMHandle(name: name, direction: .playback, options: options)
    }

    /// False for a sound server's plugin (PulseAudio's or PipeWire's `pulse`, `pipewire`, JACK's `jack`).
    public var suitsRealTimePriority: Bool { !handle.isSoundServerPlugin }

    public func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        try handle.write(buffer)
    }

    /// Waits until everything written has been played, so that nothing is cut off when the device closes.
    public func drain() {
        handle.drain()
    }
}

/// One open ALSA PCM in Clubroom's format, converting rate and channels when the device needs it.
///
/// All buffers are allocated when the device opens, so reading and writing do not allocate.
final class PCMHandle {
    let name: String
    let direction: DeviceDirection
    let deviceRate: Int
    let deviceChannels: Int
    /// Frames per device period at the device's rate.
    let devicePeriod: Int
    /// Whether the PCM is an external plugin (`type pulse`, `pipewire`, `jack`: alsa-lib's ioplug and extplug).
    /// A sound server's own threads keep its pace; its client plugins wait for data by polling, and two such
    /// loops at real-time priority can starve the server's client threads on a two-core machine.
    let isSoundServerPlugin: Bool

    private let pcm: OpaquePointer
    private let configuration: OpaquePointer?
    private let resampler: Resampler?
    /// One device period, interleaved at the device's channel count.
    private let deviceBuffer: UnsafeMutableBufferPointer<Int16>
    /// Mono samples at the device's rate, before or after resampling.
    private let monoBuffer: UnsafeMutableBufferPointer<Int16>
    /// Samples waiting because device periods and Clubroom periods do not line up after resampling.
    private let pending: UnsafeMutableBufferPointer<Int16>
    private var pendingCount = 0

    /// alsa-lib prints its errors to stderr by default; Clubroom reports them itself, once, in plain words.
    private static let errorsSilenced: Bool = {
        _ = clubroom_snd_silence_errors()
        return true
    }()

    init(name: String, direction: DeviceDirection, options: ALSAOptions) throws(AudioDeviceError) {
        _ = Self.errorsSilenced
        self.name = name
        self.direction = direction
        let stream = direction == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK

        var configuration: OpaquePointer?
        if let text = options.configuration {
            configuration = try Self.loadConfiguration(text, device: name)
        }
        var opened: OpaquePointer?
        let code =
            configuration.map { snd_pcm_open_lconf(&opened, name, stream, 0, $0) }
            ?? snd_pcm_open(&opened, name, stream, 0)
        guard code >= 0, let pcm = opened else {
            if let configuration { snd_config_delete(configuration) }
            switch -code {
            case ENOENT, ENODEV, ENXIO: throw .notFound(device: name, code: code)
            default: throw .openFailed(device: name, code: code)
            }
        }

        let setup: Setup
        do {
            setup = try Self.configure(pcm, name: name, direction: direction, options: options)
        } catch {
            snd_pcm_close(pcm)
            if let configuration { snd_config_delete(configuration) }
            throw error
        }
        var resampler: Resampler?
        if setup.rate != AudioFormat.sampleRate {
            let (from, to) =
                direction == .capture
                ? (setup.rate, AudioFormat.sampleRate) : (AudioFormat.sampleRate, setup.rate)
            do {
                resampler = try Resampler(inputRate: from, outputRate: to)
            } catch {
                snd_pcm_close(pcm)
                if let configuration { snd_config_delete(configuration) }
                throw .unsupported(device: name, setting: "resampling from \(from) Hz to \(to) Hz", code: -EINVAL)
            }
        }

        self.pcm = pcm
        self.configuration = configuration
        self.resampler = resampler
        self.deviceRate = setup.rate
        self.deviceChannels = setup.channels
        self.devicePeriod = setup.periodFrames
        let type = snd_pcm_type(pcm)
        self.isSoundServerPlugin = type == SND_PCM_TYPE_IOPLUG || type == SND_PCM_TYPE_EXTPLUG
        deviceBuffer = .allocate(capacity: setup.periodFrames * setup.channels)
        deviceBuffer.initialize(repeating: 0)
        // Enough for one device period resampled to the larger rate, plus one of the stream's periods waiting.
        let largest = max(setup.rate, AudioFormat.sampleRate)
        let streamPeriod = AudioFormat.samples(milliseconds: options.periodMilliseconds)
        let monoCapacity = (setup.periodFrames + streamPeriod) * largest / min(setup.rate, AudioFormat.sampleRate) + 16
        monoBuffer = .allocate(capacity: monoCapacity)
        monoBuffer.initialize(repeating: 0)
        pending = .allocate(capacity: monoCapacity * 2)
        pending.initialize(repeating: 0)
    }

    deinit {
        snd_pcm_close(pcm)
        if let configuration { snd_config_delete(configuration) }
        deviceBuffer.deallocate()
        monoBuffer.deallocate()
        pending.deallocate()
    }

    private struct Setup {
        var rate: Int
        var channels: Int
        var periodFrames: Int
    }

    private static func loadConfiguration(_ text: String, device: String) throws(AudioDeviceError) -> OpaquePointer {
        var top: OpaquePointer?
        var code = snd_config_top(&top)
        guard code >= 0, let top else { throw .invalidConfiguration(device: device, code: code) }
        var input: OpaquePointer?
        code = text.withCString { snd_input_buffer_open(&input, $0, Int(strlen($0))) }
        guard code >= 0, let input else {
            snd_config_delete(top)
            throw .invalidConfiguration(device: device, code: code)
        }
        code = snd_config_load(top, input)
        snd_input_close(input)
        guard code >= 0 else {
            snd_config_delete(top)
            throw .invalidConfiguration(device: device, code: code)
        }
        return top
    }

    private static func configure(
        _ pcm: OpaquePointer, name: String, direction: DeviceDirection, options: ALSAOptions
    ) throws(AudioDeviceError) -> Setup {
        var hardware: OpaquePointer?
        guard clubroom_snd_pcm_hw_params_malloc(&hardware) >= 0, let hardware else {
            throw .openFailed(device: name, code: -ENOMEM)
        }
        defer { snd_pcm_hw_params_free(hardware) }

        func check(_ code: Int32, _ setting: String) throws(AudioDeviceError) {
            guard code >= 0 else { throw .unsupported(device: name, setting: setting, code: code) }
        }
        try check(snd_pcm_hw_params_any(pcm, hardware), "any configuration")
        try check(
            snd_pcm_hw_params_set_access(pcm, hardware, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access")
        try check(snd_pcm_hw_params_set_format(pcm, hardware, SND_PCM_FORMAT_S16_LE), "16-bit samples")
        // Mono where the device allows it; otherwise the nearest count, mixed down or duplicated here.
        var channels: UInt32 = 1
        try check(snd_pcm_hw_params_set_channels_near(pcm, hardware, &channels), "mono or stereo")
        guard channels <= 8 else {
            throw .unsupported(device: name, setting: "at most 8 channels", code: -EINVAL)
        }
        var rate = UInt32(options.rate)
        var nearness: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(pcm, hardware, &rate, &nearness), "\(options.rate) Hz")
        var period = snd_pcm_uframes_t(Int(rate) * options.periodMilliseconds / 1000)
        try check(
            snd_pcm_hw_params_set_period_size_near(pcm, hardware, &period, &nearness),
            "\(options.periodMilliseconds) ms periods")
        var buffer = period * snd_pcm_uframes_t(options.bufferPeriods)
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hardware, &buffer), "a \(buffer)-frame buffer")
        try check(snd_pcm_hw_params(pcm, hardware), "the chosen parameters")
        try check(snd_pcm_hw_params_get_period_size(hardware, &period, &nearness), "reading the period")
        try check(snd_pcm_hw_params_get_buffer_size(hardware, &buffer), "reading the buffer size")

        var software: OpaquePointer?
        guard clubroom_snd_pcm_sw_params_malloc(&software) >= 0, let software else {
            throw .openFailed(device: name, code: -ENOMEM)
        }
        defer { snd_pcm_sw_params_free(software) }
        try check(snd_pcm_sw_params_current(pcm, software), "software parameters")
        // Playback starts once two periods are queued: one playing, one in reserve, without waiting for the
        // whole buffer to fill (which would add its length to the delay).
        let start = direction == .playback ? min(period * 2, buffer) : 1
        try check(snd_pcm_sw_params_set_start_threshold(pcm, software, start), "the start threshold")
        try check(snd_pcm_sw_params_set_avail_min(pcm, software, period), "waking once per period")
        try check(snd_pcm_sw_params(pcm, software), "the software parameters")
        try check(snd_pcm_prepare(pcm), "preparing")
        return Setup(rate: Int(rate), channels: Int(channels), periodFrames: Int(period))
    }

    // MARK: Reading and writing, on the audio thread: no allocation from here on.
    //
    // Buffers are handled through pointers rather than slices: in unoptimised builds slicing goes through
    // generic collection code whose witness tables the runtime creates, with malloc, on first use.

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        var xruns = 0
        if resampler == nil && deviceChannels == 1 {
            try transfer(buffer.baseAddress!, frames: buffer.count, xruns: &xruns)
            return xruns
        }
        while pendingCount < buffer.count {
            try transfer(deviceBuffer.baseAddress!, frames: devicePeriod, xruns: &xruns)
            let mono = downmix(frames: devicePeriod)
            appendResampled(mono)
        }
        takePending(into: buffer)
        return xruns
    }

    func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        var xruns = 0
        if resampler == nil && deviceChannels == 1 {
            try transfer(UnsafeMutablePointer(mutating: buffer.baseAddress!), frames: buffer.count, xruns: &xruns)
            return xruns
        }
        appendResampled(buffer)
        while pendingCount >= devicePeriod {
            upmix(UnsafeBufferPointer(start: pending.baseAddress!, count: devicePeriod))
            dropPending(devicePeriod)
            try transfer(deviceBuffer.baseAddress!, frames: devicePeriod, xruns: &xruns)
        }
        return xruns
    }

    func drain() {
        snd_pcm_drain(pcm)
    }

    /// Reads or writes exactly `frames` frames, recovering from xruns (counted in `xruns`) and interruptions.
    private func transfer(
        _ samples: UnsafeMutablePointer<Int16>, frames: Int, xruns: inout Int
    ) throws(AudioDeviceError) {
        var done = 0
        while done < frames {
            let start = samples + done * deviceChannels
            let count = snd_pcm_uframes_t(frames - done)
            let result =
                direction == .capture ? snd_pcm_readi(pcm, start, count) : snd_pcm_writei(pcm, start, count)
            if result > 0 {
                done += result
                continue
            }
            if result == 0 {
                // A blocking PCM should not return empty-handed; waiting for it keeps a confused plugin from
                // turning this loop into a spin.
                _ = snd_pcm_wait(pcm, 20)
                continue
            }
            let code = Int32(result)
            if code == -EPIPE || code == -ESTRPIPE {
                xruns += 1
            } else if code != -EINTR && code != -EAGAIN {
                throw AudioDeviceError.transfer(device: name, code: code)
            }
            let recovered = snd_pcm_recover(pcm, code, 1)
            if recovered < 0 {
                throw AudioDeviceError.transfer(device: name, code: recovered)
            }
        }
    }

    /// Mixes one interleaved device period down to mono in `monoBuffer`.
    private func downmix(frames: Int) -> UnsafeBufferPointer<Int16> {
        if deviceChannels == 1 {
            return UnsafeBufferPointer(start: deviceBuffer.baseAddress!, count: frames)
        }
        for frame in 0..<frames {
            var sum = 0
            for channel in 0..<deviceChannels {
                sum += Int(deviceBuffer[frame * deviceChannels + channel])
            }
            monoBuffer[frame] = Int16(sum / deviceChannels)
        }
        return UnsafeBufferPointer(start: monoBuffer.baseAddress!, count: frames)
    }

    /// Copies one device period of mono samples into every channel of `deviceBuffer`.
    private func upmix(_ mono: UnsafeBufferPointer<Int16>) {
        for frame in 0..<mono.count {
            for channel in 0..<deviceChannels {
                deviceBuffer[frame * deviceChannels + channel] = mono[frame]
            }
        }
    }

    /// Appends `samples` to `pending`, resampled when the device's rate differs from Clubroom's.
    private func appendResampled(_ samples: UnsafeBufferPointer<Int16>) {
        guard let resampler else {
            (pending.baseAddress! + pendingCount).update(from: samples.baseAddress!, count: samples.count)
            pendingCount += samples.count
            return
        }
        var offset = 0
        while offset < samples.count && pendingCount < pending.count {
            let space = UnsafeMutableBufferPointer(
                start: pending.baseAddress! + pendingCount, count: pending.count - pendingCount)
            let rest = UnsafeBufferPointer(start: samples.baseAddress! + offset, count: samples.count - offset)
            guard
                let (consumed, produced) = try? resampler.process(rest, into: space),
                consumed + produced > 0
            else { return }
            offset += consumed
            pendingCount += produced
        }
    }

    private func takePending(into buffer: UnsafeMutableBufferPointer<Int16>) {
        buffer.baseAddress!.update(from: pending.baseAddress!, count: buffer.count)
        dropPending(buffer.count)
    }

    private func dropPending(_ count: Int) {
        let remaining = pendingCount - count
        if remaining > 0 {
            pending.baseAddress!.update(from: pending.baseAddress! + count, count: remaining)
        }
        pendingCount = remaining
    }
}
