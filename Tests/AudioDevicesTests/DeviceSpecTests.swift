import Testing

@testable import AudioDevices

@Suite struct DeviceSpecTests {
    @Test func inputsParse() throws {
        #expect(try DeviceSpec.input("default") == .alsa("default"))
        #expect(try DeviceSpec.input("hw:1,0") == .alsa("hw:1,0"))
        #expect(try DeviceSpec.input("alsa:null") == .alsa("null"))
        #expect(try DeviceSpec.input("tone:440") == .tone(hertz: 440))
        #expect(try DeviceSpec.input("wav:/tmp/a b.wav") == .wav(path: "/tmp/a b.wav"))
        #expect(try DeviceSpec.input("silence") == .silence)
        #expect(try DeviceSpec.input("null") == .silence)
    }

    @Test func outputsParse() throws {
        #expect(try DeviceSpec.output("default") == .alsa("default"))
        #expect(try DeviceSpec.output("null") == .null)
        #expect(try DeviceSpec.output("record:out.wav") == .record(path: "out.wav"))
        #expect(try DeviceSpec.output("alsa:record:x") == .alsa("record:x"))
    }

    @Test func descriptionsRoundTrip() throws {
        for text in ["default", "tone:440", "wav:a.wav", "silence", "alsa:null", "alsa:tone:3"] {
            #expect(try DeviceSpec.input(text).description == text)
        }
        #expect(try DeviceSpec.output("record:x.wav").description == "record:x.wav")
    }

    @Test func mistakesAreExplained() {
        #expect(throws: DeviceSpecError(spec: "tone:abc", direction: .capture, problem: .badFrequency("abc"))) {
            try DeviceSpec.input("tone:abc")
        }
        #expect(throws: DeviceSpecError(spec: "tone:5", direction: .capture, problem: .badFrequency("5"))) {
            try DeviceSpec.input("tone:5")
        }
        #expect(throws: DeviceSpecError(spec: "wav:", direction: .capture, problem: .missingValue("wav:PATH"))) {
            try DeviceSpec.input("wav:")
        }
        #expect(throws: DeviceSpecError(spec: "", direction: .playback, problem: .empty)) {
            try DeviceSpec.output("")
        }
        #expect(throws: DeviceSpecError(spec: "tone:440", direction: .playback, problem: .inputOnly("tone:HZ"))) {
            try DeviceSpec.output("tone:440")
        }
        #expect(
            throws: DeviceSpecError(spec: "record:x", direction: .capture, problem: .outputOnly("record:PATH"))
        ) {
            try DeviceSpec.input("record:x")
        }
    }

    @Test func messagesNameTheOptionAndTheFix() {
        let frequency = DeviceSpecError(spec: "tone:abc", direction: .capture, problem: .badFrequency("abc"))
        #expect(
            frequency.description
                == "--input 'tone:abc': 'abc' is not a tone frequency; use tone:HZ with a whole number of hertz "
                + "from 20 to 20000")
        let wav = DeviceSpecError(spec: "wav:x", direction: .playback, problem: .inputOnly("wav:PATH"))
        #expect(
            wav.description
                == "--output 'wav:x': wav:PATH is a microphone, not an output; to record what you hear use record:PATH")
    }
}
