import Foundation

/// A bench's own threads (the listeners' readers, the probes) stand for machines other than the one measured.
/// Under the idle policy they take only the CPU the measured threads leave: the time those wait for a CPU is then
/// spent waiting for each other, as on the machine they stand for, not for the rig.
public enum RigThread {
    /// Linux's SCHED_IDLE (<linux/sched.h>), which the C library declares only for _GNU_SOURCE.
    static let idlePolicy: Int32 = 5

    /// Puts the calling thread under SCHED_IDLE; false when the kernel refuses.
    @discardableResult
    public static func standAside() -> Bool {
        var parameters = sched_param(sched_priority: 0)
        return sched_setscheduler(0, idlePolicy, &parameters) == 0
    }

    /// Puts the calling thread back under SCHED_OTHER; false when the kernel refuses.
    @discardableResult
    public static func stepBack() -> Bool {
        var parameters = sched_param(sched_priority: 0)
        return sched_setscheduler(0, Int32(SCHED_OTHER), &parameters) == 0
    }

    /// Whether the calling thread runs under SCHED_IDLE.
    public static var isStandingAside: Bool { sched_getscheduler(0) == idlePolicy }
}
