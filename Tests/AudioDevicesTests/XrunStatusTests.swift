import AudioDevices
import Testing

/// Xruns in words for the status line, as the client's control thread reports them.
@Suite struct XrunStatusTests {
    @Test func xrunsAreReportedInWords() {
        #expect(
            DeviceStatus.xruns(.playback, device: "default", count: 3).message
                == "Speaker “default” could not keep up 3 times (what you hear had gaps); the machine may be too busy.")
        #expect(
            DeviceStatus.xruns(.capture, device: "hw:1", count: 1).message
                == "Microphone “hw:1” could not keep up once (some of your voice was lost); the machine may be too "
                + "busy.")
    }
}
