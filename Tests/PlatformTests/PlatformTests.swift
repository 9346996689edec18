import Dispatch
import Glibc
import Platform
import RoomTesting
import Synchronization
import Testing

@Suite(.ownThread) struct PlainNameTests {
    @Test func acceptsLettersDigitsAndThreeMarks() {
        #expect(PlainName.isValid("lobby"))
        #expect(PlainName.isValid("Room-1_a.b"))
        #expect(PlainName.isValid(String(repeating: "x", count: 64)))
    }

    @Test func refusesEmptyLongAndOtherBytes() {
        #expect(!PlainName.isValid(""))
        #expect(!PlainName.isValid(String(repeating: "x", count: 65)))
        for name in ["a/b", "a b", "{a}", "a|b", "café", "a:b", "%41"] {
            #expect(!PlainName.isValid(name), "\(name)")
        }
    }
}

@Suite(.ownThread) struct PercentEncodingTests {
    @Test func decodesEscapesAsUTF8() {
        #expect(PercentEncoding.decode("caf%C3%A9") == "café")
        #expect(PercentEncoding.decode("caf%c3%a9") == "café")
        #expect(PercentEncoding.decode("a%2Fb") == "a/b")
        #expect(PercentEncoding.decode("") == "")
    }

    @Test func plusIsASpaceOnlyWhenAsked() {
        #expect(PercentEncoding.decode("a+b") == "a+b")
        #expect(PercentEncoding.decode("a+b", plusIsSpace: true) == "a b")
        #expect(PercentEncoding.decode("a%2Bb", plusIsSpace: true) == "a+b")
    }

    @Test func refusesBrokenEscapesAndBytesThatAreNotUTF8() {
        for text in ["%", "%4", "%zz", "%G1", "a%2", "%C3", "%FF"] {
            #expect(PercentEncoding.decode(text) == nil, "\(text)")
        }
    }
}

@Suite(.ownThread) struct DurationPartsTests {
    /// The whole duration counts, seconds and fraction: 2.5 s is 2,500 ms, not the 500 ms of its fraction alone.
    @Test func convertsTheWholeDuration() {
        let duration = Duration.seconds(2) + .milliseconds(500) + .microseconds(7)
        #expect(duration.inMilliseconds == 2_500)
        #expect(duration.inMicroseconds == 2_500_007)
        #expect(duration.inNanoseconds == 2_500_007_000)
        #expect(duration.inSeconds == 2.500007)
        #expect(duration.inSecondsRoundedUp == 3)
        #expect(Duration.seconds(4).inSecondsRoundedUp == 4)
        #expect(Duration.zero.inMicroseconds == 0)
    }
}

@Suite(.ownThread) struct ThreadStartTests {
    private func nameSeenByTheKernel(startingWith name: String) -> String? {
        let seen = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        startThread(named: name) {
            let descriptor = open("/proc/thread-self/comm", O_RDONLY)
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = read(descriptor, &bytes, bytes.count)
            close(descriptor)
            seen.withLock { $0 = count > 0 ? String(decoding: bytes[0..<count], as: UTF8.self) : nil }
            done.signal()
        }
        done.wait()
        return seen.withLock { $0 }
    }

    @Test func namesTheThreadInTheKernel() {
        #expect(nameSeenByTheKernel(startingWith: "test-starter") == "test-starter\n")
    }

    @Test func theKernelKeepsFifteenBytes() {
        #expect(nameSeenByTheKernel(startingWith: "test-starter-long-name") == "test-starter-lo\n")
    }

    @Test func aStackSizeIsGiven() {
        let ran = DispatchSemaphore(value: 0)
        startThread(named: "test-stack", stackSize: 1 << 20) { ran.signal() }
        #expect(ran.wait(timeout: .now() + 10) == .success)
    }
}
