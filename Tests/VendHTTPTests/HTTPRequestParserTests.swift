import Testing

@testable import VendHTTP

/// The parser against well-formed requests, requests cut anywhere, and what a hostile client sends.
@Suite struct HTTPRequestParserTests {
    let parser = HTTPRequestParser()

    func parse(_ text: String, _ parser: HTTPRequestParser? = nil) -> HTTPRequestParser.Outcome {
        (parser ?? self.parser).parse(Array(text.utf8)[...])
    }

    func request(_ text: String) throws -> (HTTPRequest, Int) {
        guard case .request(let request, let consumed) = parse(text) else {
            Issue.record("not a request: \(parse(text))")
            throw Unparsed()
        }
        return (request, consumed)
    }

    struct Unparsed: Error {}

    func status(_ text: String, _ parser: HTTPRequestParser? = nil) -> Int? {
        if case .invalid(let status, _) = parse(text, parser) { status.code } else { nil }
    }

    @Test func aGetWithItsFields() throws {
        let text = "GET /pictures/banana-milk?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept:  */* \t\r\nUser-Agent: t\r\n\r\n"
        let (request, consumed) = try request(text)
        #expect(consumed == text.utf8.count)
        #expect(request.method == "GET")
        #expect(request.target == "/pictures/banana-milk?x=1")
        #expect(request.path == "/pictures/banana-milk")
        #expect(request.segments == ["pictures", "banana-milk"])
        #expect(request.query == "x=1")
        #expect(request.minorVersion == 1)
        #expect(request.headers.map(\.name) == ["host", "accept", "user-agent"])
        #expect(request.header("ACCEPT") == "*/*")
        #expect(request.keepAlive)
        #expect(request.body.isEmpty)
    }

    @Test func theRootHasNoSegments() throws {
        #expect(try request("GET / HTTP/1.1\r\nHost: a\r\n\r\n").0.segments == [])
        #expect(try request("GET /select/ HTTP/1.1\r\nHost: a\r\n\r\n").0.segments == ["select", ""])
    }

    @Test func percentEncodedSegmentsAreDecodedOneByOne() throws {
        let (request, _) = try request("GET /pictures/a%20b/c%2Fd/%ED%95%9C HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(request.segments == ["pictures", "a b", "c/d", "한"])
        #expect(status("GET /pictures/%zz HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /pictures/%4 HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /pictures/%00 HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /pictures/%FF HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
    }

    @Test func bareLFEndsLinesAndLeadingEmptyLinesAreSkipped() throws {
        let (request, consumed) = try request("\r\n\nGET / HTTP/1.1\nHost: a\n\n")
        #expect(request.path == "/")
        #expect(consumed == 27)
        #expect(status("\n\n\n\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
    }

    @Test func aRequestCutAnywhereIsIncomplete() {
        let text = "POST /select/A1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
        for cut in 0..<text.utf8.count {
            let outcome = parser.parse(Array(text.utf8)[..<cut])
            #expect(outcome == .incomplete, "cut at \(cut): \(outcome)")
        }
        guard case .request(let request, let consumed) = parse(text) else {
            Issue.record("the whole request was not read")
            return
        }
        #expect(request.body == Array("hello".utf8))
        #expect(consumed == text.utf8.count)
    }

    @Test func pipelinedRequestsAreReadOneAtATime() throws {
        let first = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
        let second = "POST /coin-return HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
        let bytes = Array((first + second).utf8)
        guard case .request(let one, let consumed) = parser.parse(bytes[...]) else { throw Unparsed() }
        #expect(one.method == "GET")
        #expect(consumed == first.utf8.count)
        guard case .request(let two, let rest) = parser.parse(bytes[consumed...]) else { throw Unparsed() }
        #expect(two.method == "POST")
        #expect(two.path == "/coin-return")
        #expect(rest == second.utf8.count)
    }

    @Test func connectionOptions() throws {
        #expect(try !request("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").0.keepAlive)
        #expect(try !request("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, Close\r\n\r\n").0.keepAlive)
        #expect(try !request("GET / HTTP/1.0\r\n\r\n").0.keepAlive)
        #expect(try request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").0.keepAlive)
    }

    // MARK: Refused

    @Test(arguments: [
        ("", 400, "no request line"),
        ("GET\r\n\r\n", 400, "one word"),
        ("GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n", 400, "four words"),
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400, "two spaces"),
        ("G\u{1}T / HTTP/1.1\r\nHost: a\r\n\r\n", 400, "a control character in the method"),
        ("GET / HTTP/1.1\r\n\r\n", 400, "HTTP/1.1 without Host"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Hosts"),
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, "a space before the colon"),
        ("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400, "obsolete line folding"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", 400, "a NUL in a value"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{7F}\r\n\r\n", 400, "DEL in a value"),
        ("GET / HTTP/1.1\r\nHost: a\r\nno colon\r\n\r\n", 400, "a line without a colon"),
        ("GET / HTTP/1.1\r\nHost: a\r\n: empty name\r\n\r\n", 400, "an empty field name"),
        ("GET / HTTP/1.1\rHost: a\r\n\r\n", 400, "a bare CR"),
        ("GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400, "a bare CR in the header section"),
        ("GET http://example.com/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, "an absolute target"),
        ("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400, "an asterisk target"),
        ("GET /a\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n", 400, "DEL in the target"),
        ("GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400, "not a version"),
        ("GET / http/1.1\r\nHost: a\r\n\r\n", 400, "a lowercase version"),
        ("GET / HTTP/11\r\nHost: a\r\n\r\n", 400, "a version without a dot"),
        ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "the HTTP/2 preface"),
        ("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505, "HTTP/0.9"),
        ("GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505, "HTTP/3"),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, "a negative length"),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1e3\r\n\r\n", 400, "a length that is not decimal digits"),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400, "a list of lengths"),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400, "an empty length"),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400, "two lengths"),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1025\r\n\r\n", 413, "a body over the limit"),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 413, "a length beyond Int"),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411, "chunked"),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400, "chunked and a length"),
    ])
    func refused(text: String, expected: Int, what: String) {
        if text.isEmpty {
            #expect(parse(text) == .incomplete, "nothing yet is not a refusal")
            #expect(status("\r\n\r\n\r\n\r\n\r\n") == expected, "\(what)")
        } else {
            #expect(status(text) == expected, "\(what)")
        }
    }

    @Test func twoEqualLengthsAreOne() throws {
        let (request, _) = try request("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab")
        #expect(request.body == Array("ab".utf8))
    }

    @Test func theRequestLineLimitHoldsBeforeItsEnd() {
        var limits = HTTPRequestParser.Limits()
        limits.requestLine = 64
        let parser = HTTPRequestParser(limits: limits)
        let long = "GET /" + String(repeating: "a", count: 60)
        // 65 bytes without a line end: no request line fits, whatever follows.
        #expect(status(long, parser) == 414)
        #expect(parse(String(long.prefix(64)), parser) == .incomplete)
        // A line of exactly the limit is read; its CR may come alone.
        let exact = "GET /" + String(repeating: "a", count: 50) + " HTTP/1.1"
        #expect(exact.utf8.count == 64)
        #expect(parse(exact + "\r", parser) == .incomplete)
        guard case .request = parse(exact + "\r\nHost: a\r\n\r\n", parser) else {
            Issue.record("a request line at the limit was refused")
            return
        }
        #expect(status("GET /" + String(repeating: "a", count: 51) + " HTTP/1.1\r\nHost: a\r\n\r\n", parser) == 414)
        // Arbitrary bytes with no line end at all, as a client that never ends its line sends.
        #expect(parser.parse([UInt8](repeating: 0x41, count: 10_000)[...]) == .invalid(.uriTooLong, reason: "request line longer than 64 bytes"))
    }

    @Test func headerSectionLimits() {
        var limits = HTTPRequestParser.Limits()
        limits.headerBytes = 100
        limits.headerFields = 4
        let parser = HTTPRequestParser(limits: limits)
        let big = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 100) + "\r\n\r\n"
        #expect(status(big, parser) == 431)
        // Refused before the line ends: a client cannot make the server buffer without end.
        #expect(status(String(big.prefix(140)), parser) == 431)
        let many = "GET / HTTP/1.1\r\nHost: a\r\n" + (1...4).map { "X\($0): y\r\n" }.joined() + "\r\n"
        #expect(status(many, parser) == 431)
        let four = "GET / HTTP/1.1\r\nHost: a\r\n" + (1...3).map { "X\($0): y\r\n" }.joined() + "\r\n"
        guard case .request = parse(four, parser) else {
            Issue.record("four fields were refused")
            return
        }
    }

    @Test func theBodyLimitIsCheckedBeforeTheBodyArrives() {
        var limits = HTTPRequestParser.Limits()
        limits.body = 10
        let parser = HTTPRequestParser(limits: limits)
        #expect(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", parser) == 413)
        #expect(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123", parser) == .incomplete)
    }

    @Test func eventMessagesSplitLines() {
        #expect(HTTPEventBroadcast.message(data: "{\"a\":1}") == Array("data: {\"a\":1}\n\n".utf8))
        #expect(HTTPEventBroadcast.message(data: "one\r\ntwo\nthree") == Array("data: one\ndata: two\ndata: three\n\n".utf8))
    }
}
