import Dispatch
import Foundation
import RoomCore
import RoomTesting

@testable import RoomServer

/// A `ChildSupervisor` of either kind on a loop of its own (a serial queue) and a clock of its own, whose children
/// are a shell script: what it schedules (the pauses) and what it tells the room are kept for the tests to read.
final class SupervisorHarness<Kind: ChildKind>: @unchecked Sendable {
    let folder: String
    let queue = DispatchQueue(label: "loop")
    private let lock = NSLock()
    private var clock: Timestamp = 1_796_000_000_000
    private var delays: [Duration] = []
    private var sentences: [String] = []
    private(set) var supervisor: ChildSupervisor<Kind>!

    /// What the supervisor scheduled, in order.
    var pauses: [Duration] { lock.withLock { delays } }
    /// What the kind told the room, in order.
    var told: [String] { lock.withLock { sentences } }

    /// `script` is the children's program (after `#!/bin/sh`); `step` is how far the clock moves at each reading
    /// (past `quickFailure`, every run counts as a long one); `before` sees the folder before the supervisor
    /// starts; `kind` makes the kind from the folder, the program and what it tells.
    init(
        _ prefix: String, script: String, step: Timestamp, before: (String) throws -> Void = { _ in },
        kind: (_ folder: String, _ program: String, _ tell: @escaping @Sendable (String) -> Void) -> Kind
    ) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try before(folder)
        let program = folder + ".sh"
        try writeScript("#!/bin/sh\n" + script + "\n", to: program)
        let queue = queue
        let made = kind(folder, program) { [unowned self] sentence in lock.withLock { sentences.append(sentence) } }
        supervisor = ChildSupervisor(
            made, log: ServerLog(minimum: .error), execute: { task in queue.async(execute: task) },
            schedule: { [unowned self] delay, task in
                lock.withLock { delays.append(delay) }
                queue.async(execute: task)
            },
            clock: { [unowned self] in
                lock.withLock {
                    clock += step
                    return clock
                }
            })
    }

    /// The lines the children appended to `name` in the folder.
    func lines(_ name: String) -> [String] {
        let text = (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    func waitFor(_ condition: () -> Bool) -> Bool { waitUntil(limit: 15, every: 0.02, condition) }

    /// Hands `outcome` of `room` to the supervisor, on its loop.
    func consume(_ outcome: Outcome, in room: String = "jazz") {
        queue.sync { supervisor.consume(outcome, in: room) }
    }

    /// Removes the folder and the program.
    func remove() {
        try? FileManager.default.removeItem(atPath: folder)
        try? FileManager.default.removeItem(atPath: folder + ".sh")
    }
}
