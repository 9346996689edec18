import Dispatch
import Foundation
import Glibc
import RoomTesting
import RoomTransport
import Testing

@testable import RoomServer

@Suite(.ownThread) struct DepartureLogTests {
    /// 25 peers leaving at once: the first 20 get their line, the other 5 one line a moment later.
    @Test func aCrowdLeavingGetsTwentyLinesAndOneForTheRest() throws {
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]) }
        let log = ServerLog(minimum: .info, descriptor: pipeEnds[1])
        let loop = try EventLoop(name: "test-departure-log")
        defer { loop.shutdown() }
        let lines = DepartureLog(perSecond: 20, summaryDelay: .milliseconds(200))
        let built = MemoryReturnTests.Returns()
        onLoop(loop) {
            for index in 0..<25 {
                lines.departed(
                    { () -> String in
                        built.count.add(1, ordering: .relaxed)
                        return "p\(index) left room lobby"
                    }(), to: log, loop: loop)
            }
        }
        // Only the lines written were built.
        #expect(built.count.load(ordering: .relaxed) == 20)
        #expect(onLoop(loop) { lines.unlogged } == 5)
        usleep(600_000)
        close(pipeEnds[1])
        let text = String(decoding: FileHandle(fileDescriptor: pipeEnds[0]).readDataToEndOfFile(), as: UTF8.self)
        let written = text.split(separator: "\n").map {
            $0.split(separator: " ", maxSplits: 2).last.map(String.init) ?? ""
        }
        #expect(
            written == (0..<20).map { "p\($0) left room lobby" } + [
                "5 more peers left, not logged one by one (at most 20 departure lines a second)"
            ])
        #expect(onLoop(loop) { lines.unlogged } == 0)
    }
}
