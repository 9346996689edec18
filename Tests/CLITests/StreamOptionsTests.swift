import Foundation
import RoomTesting
import Testing

/// `serve --stream NAME=URL` and `--streams FILE` are checked before the server starts: a bad destination is a
/// usage error that names it, and never repeats its password.
@Suite(.ownThread) struct StreamOptionsTests {
    @Test func aBadNameIsAUsageError() throws {
        let result = try runClubroom(["serve", "--stream", "Radio=icecast://source:hush@127.0.0.1:8000/r.opus"])
        #expect(result.status == 2)
        #expect(
            result.firstErrorLine
                == "clubroom serve: bad value 'Radio=…' for '--stream' (expected NAME=URL; the name 'Radio' must be "
                + "1 to 32 of a-z, 0-9 and -)")
        #expect(!result.standardError.contains("hush"))
    }

    @Test func anUnknownKindOfAddressIsAUsageError() throws {
        let result = try runClubroom(["serve", "--stream", "radio=http://example.org/x"])
        #expect(result.status == 2)
        #expect(result.firstErrorLine.contains("radio: the address must be icecast://"))
    }

    @Test func aNameGivenTwiceIsAUsageError() throws {
        let result = try runClubroom(["serve", "--stream", "tv=hls:/tmp/a", "--stream", "tv=hls:/tmp/b"])
        #expect(result.status == 2)
        #expect(result.firstErrorLine.hasSuffix("(expected the stream tv is named twice)"))
    }

    @Test func aFileNamesItsBadLine() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.path + "/streams"
        try "# the server's streams\n\ntv=hls:/srv/tv\nradio=icecast://source@h:8000/r.opus\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let result = try runClubroom(["serve", "--streams", file])
        #expect(result.status == 2)
        #expect(result.firstErrorLine.contains("\(file) line 4: radio: "), "\(result.standardError)")
    }
}
