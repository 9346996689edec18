#if canImport(Glibc)
import Glibc
#endif

let status = await runClubroom(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
