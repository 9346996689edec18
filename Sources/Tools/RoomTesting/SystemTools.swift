import Foundation
import Glibc

/// The path of the system tool `name` (`ip`, `nsenter`, `mount`, …), from the usual folders, or nil.
func findTool(_ name: String) -> String? {
    ["/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/"].map { $0 + name }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Why a test that needs root and `tools` cannot run here: `rootReason` without root, else the first tool not
/// installed (`from` says where it comes from); nil when it can.
func missingRootOrTools(_ rootReason: String, tools: [String], from: String) -> String? {
    if getuid() != 0 { return rootReason }
    for tool in tools where findTool(tool) == nil {
        return "'\(tool)' is not installed (\(from))"
    }
    return nil
}
