import Foundation

/// What the kernel says a process and its threads have used, read from `/proc`: CPU ticks (user and system)
/// and voluntary context switches (wake-ups) per thread, the threads' names, and the resident set. The one
/// reader of these files for every benchmark.
public struct ProcessSample: Sendable {
    /// Clock ticks per second of the `stat` files' CPU fields.
    public static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// One thread at the moment of the sample.
    public struct Task: Sendable, Equatable {
        /// The thread's name (the kernel keeps 15 characters).
        public var name: String
        /// User and system ticks.
        public var ticks: Int
        /// Voluntary context switches: how often it went to sleep and was woken.
        public var voluntarySwitches: Int
    }

    /// One thread's use between two samples.
    public struct ThreadUse: Sendable, Equatable {
        /// The thread's name; threads of one name are added together.
        public var name: String
        /// CPU seconds per minute of the time between the samples.
        public var cpuSecondsPerMinute: Double
        /// Voluntary context switches per second.
        public var wakeUpsPerSecond: Double
    }

    /// User and system ticks of the whole process (its threads, live and ended).
    public var ticks: Int
    /// Its threads by thread ID.
    public var tasks: [Int: Task]

    /// The sum of the threads' voluntary context switches.
    public var voluntarySwitches: Int { tasks.values.reduce(0) { $0 + $1.voluntarySwitches } }

    /// A sample of process `pid` now; nil when it has exited.
    public init?(pid: Int32) {
        guard let process = Self.stat("/proc/\(pid)/stat") else { return nil }
        ticks = process.ticks
        tasks = [:]
        let folder = "/proc/\(pid)/task"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            guard let id = Int(entry), let stat = Self.stat("\(folder)/\(entry)/stat"),
                let status = try? String(contentsOfFile: "\(folder)/\(entry)/status", encoding: .utf8)
            else { continue }
            let switches = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                .flatMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            tasks[id] = Task(name: stat.name, ticks: stat.ticks, voluntarySwitches: switches ?? 0)
        }
    }

    /// This process now.
    public static func current() -> ProcessSample? { ProcessSample(pid: getpid()) }

    /// Each thread alive at both samples, busiest first, threads of one name together, over `seconds`.
    public func threads(since before: ProcessSample, seconds: Double) -> [ThreadUse] {
        var byName: [String: (ticks: Int, switches: Int)] = [:]
        for (id, task) in tasks {
            let earlier = before.tasks[id] ?? Task(name: task.name, ticks: 0, voluntarySwitches: 0)
            let sum = byName[task.name] ?? (0, 0)
            byName[task.name] = (
                sum.ticks + task.ticks - earlier.ticks,
                sum.switches + task.voluntarySwitches - earlier.voluntarySwitches
            )
        }
        return byName.map { name, use in
            ThreadUse(
                name: name, cpuSecondsPerMinute: Double(use.ticks) / Self.ticksPerSecond / seconds * 60,
                wakeUpsPerSecond: Double(use.switches) / seconds)
        }.sorted { ($0.cpuSecondsPerMinute, $0.wakeUpsPerSecond) > ($1.cpuSecondsPerMinute, $1.wakeUpsPerSecond) }
    }

    /// CPU seconds each thread name has used so far.
    public var cpuSecondsByThreadName: [String: Double] {
        var totals: [String: Double] = [:]
        for task in tasks.values { totals[task.name, default: 0] += Double(task.ticks) / Self.ticksPerSecond }
        return totals
    }

    /// The name and the user plus system ticks in a `stat` file.
    static func stat(_ path: String) -> (name: String, ticks: Int)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        let name = String(text[text.index(after: open)..<close])
        // After the name: state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return (name, user + system)
    }

    /// A process's resident set in bytes (`/proc/PID/statm`; this process's without `pid`), 0 when unreadable.
    public static func residentBytes(pid: Int32? = nil) -> Int {
        let path = "/proc/\(pid.map(String.init) ?? "self")/statm"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The anonymous part of a process's resident set in bytes (`RssAnon` in `/proc/PID/status`: its heap and
    /// other private memory, without the pages of its program and libraries read in from their files), 0 when
    /// unreadable.
    public static func anonymousResidentBytes(pid: Int32? = nil) -> Int {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}

/// A thread of this process's CPU time and the time it spent ready but waiting for a CPU, in nanoseconds (the
/// kernel's `schedstat` for the thread: finer than the `stat` files' ticks).
public struct ThreadTimes: Sendable, Equatable {
    public var cpu: UInt64 = 0
    public var waiting: UInt64 = 0

    public init(cpu: UInt64 = 0, waiting: UInt64 = 0) {
        self.cpu = cpu
        self.waiting = waiting
    }

    /// The times of thread `thread` of this process now; zero when unreadable.
    public static func read(thread: Int) -> ThreadTimes {
        guard thread > 0,
            let text = try? String(contentsOfFile: "/proc/self/task/\(thread)/schedstat", encoding: .utf8)
        else { return ThreadTimes() }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { UInt64($0) }
        guard fields.count >= 2 else { return ThreadTimes() }
        return ThreadTimes(cpu: fields[0], waiting: fields[1])
    }

    /// What was used from `earlier` to this reading.
    public func since(_ earlier: ThreadTimes) -> ThreadTimes {
        ThreadTimes(cpu: cpu &- earlier.cpu, waiting: waiting &- earlier.waiting)
    }
}

/// The `fraction` quantile (0...1) of `values`, nearest rank; 0 with none.
public func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(sorted.count - 1, max(0, rank))]
}

/// Whether this program was built for debugging: its figures are many times a release build's.
public var isDebugBuild: Bool {
    #if DEBUG
    return true
    #else
    return false
    #endif
}

/// A note for a report saying which build the figures come from.
public var buildNote: String {
    isDebugBuild ? "debug build: figures are many times those of 'swift build -c release'" : "release build"
}
