import AudioCore
import Dispatch
import Foundation
import Platform
import StreamOutputs
import Synchronization

/// Feeds a 440 Hz tone, 20 ms frames paced in real time, to outputs until stopped.
final class ToneFeeder: @unchecked Sendable {
    private let outputs: [LiveOutput]
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(_ outputs: [LiveOutput], frequency: Double = 440) {
        self.outputs = outputs
        Thread.detachNewThread { [self] in
            var tone = ToneGenerator(frequency: frequency, amplitude: 0.5)
            var clock = PeriodClock(periodNanoseconds: Int64(AudioFormat.frameMilliseconds) * 1_000_000)
            var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            var offset: Int64 = 0
            while !stopped.load(ordering: .acquiring) {
                tone.fill(&frame)
                for output in outputs { try? output.write(frame, offset: offset) }
                offset += Int64(AudioFormat.frameMilliseconds)
                clock.wait()
            }
            done.signal()
        }
    }

    /// Stops the tone and waits for its thread; stopping again does nothing.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        done.wait()
    }
}

/// Every report the outputs give, in order.
final class ReportLog: Sendable {
    private let reports = Mutex<[StreamReport]>([])
    func record(_ report: StreamReport) { reports.withLock { $0.append(report) } }
    var all: [StreamReport] { reports.withLock { $0 } }
    func of(_ name: String) -> [StreamReport] { all.filter { $0.destination == name } }
    func last(_ name: String) -> StreamState? { of(name).last?.state }
}
