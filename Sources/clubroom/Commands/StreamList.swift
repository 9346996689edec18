import Foundation
import StreamOutputs

/// The stream destinations of a server (`serve --stream NAME=URL`, `--streams FILE`) and of a stream's recorder
/// (`record --destination-file FILE`), read by one parser: `NAME=URL`, where NAME is 1 to 32 of `a-z 0-9 -` and
/// URL is `icecast://USER:PASSWORD@HOST:PORT/MOUNT.opus`, `rtmp://HOST[:PORT]/APP/KEY` or `hls:/ABSOLUTE/DIR`. An
/// error never repeats a password or a stream key.
enum StreamList {
    struct Entry: Equatable {
        var name: String
        var url: String
        var destination: StreamDestination
    }

    /// Reads one `NAME=URL`.
    static func entry(_ text: String) throws(StreamListError) -> Entry {
        guard let equals = text.firstIndex(of: "=") else {
            throw StreamListError("it must be NAME=URL")
        }
        let name = String(text[..<equals]).trimmingCharacters(in: .whitespaces)
        let url = String(text[text.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
        guard isName(name) else {
            throw StreamListError("the name '\(name.prefix(40))' must be 1 to 32 of a-z, 0-9 and -")
        }
        return Entry(name: name, url: url, destination: try destination(url, name: name))
    }

    /// Reads a destination's URL.
    static func destination(_ url: String, name: String) throws(StreamListError) -> StreamDestination {
        do throws(StreamError) {
            if url.hasPrefix("icecast://") { return try .icecast(url) }
            if url.hasPrefix("rtmp://") { return try .rtmp(url) }
            if url.hasPrefix("hls:") {
                let path = String(url.dropFirst("hls:".count))
                guard path.hasPrefix("/") else {
                    throw StreamError.badDestination(text: "HLS", problem: "the folder must be absolute (hls:/DIR)")
                }
                return try .hls(path)
            }
        } catch {
            throw StreamListError("\(name): \(error.reason)")
        }
        throw StreamListError(
            "\(name): the address must be icecast://USER:PASSWORD@HOST:PORT/MOUNT.opus, rtmp://HOST/APP/KEY or "
                + "hls:/DIR")
    }

    /// Reads a file of `NAME=URL` lines; blank lines and lines starting with `#` are skipped. `source` names the
    /// file in errors, with the line's number.
    static func lines(_ text: String, source: String) throws(StreamListError) -> [Entry] {
        var entries: [Entry] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            do throws(StreamListError) {
                entries.append(try entry(line))
            } catch {
                throw StreamListError("\(source) line \(index + 1): \(error.message)")
            }
        }
        return entries
    }

    /// Every entry, the names told apart: a name given twice is an error.
    static func checked(_ entries: [Entry]) throws(StreamListError) -> [Entry] {
        var seen: Set<String> = []
        for entry in entries where !seen.insert(entry.name).inserted {
            throw StreamListError("the stream \(entry.name) is named twice")
        }
        guard entries.count <= 64 else { throw StreamListError("at most 64 streams") }
        return entries
    }

    static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 32
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }
}

/// Why a stream destination cannot be read; never with its password or stream key.
struct StreamListError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
