import CCurl
import Foundation
import Guards
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP call through libcurl's multi interface, run by ``run()`` on a thread of its own; its
/// handles live and die on that thread. ``cancel()``, from any thread, wakes the transfer's poll
/// so that it stops at once.
final class CurlTransfer: @unchecked Sendable {
    private let request: HTTPRequest
    private let timeout: Duration
    private let bodyLimit: Int
    /// The multi handle while the transfer runs (for ``cancel()`` to wake), and whether it was
    /// cancelled: under one lock, so that a cancel never wakes a handle already cleaned up.
    private let state = Mutex<(multi: UnsafeMutableRawPointer?, cancelled: Bool)>((nil, false))

    /// curl_global_init, once per process, before the first handle.
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    init(request: HTTPRequest, timeout: Duration, bodyLimit: Int) {
        self.request = request
        self.timeout = timeout
        self.bodyLimit = bodyLimit
    }

    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if let multi = state.multi { curl_multi_wakeup(multi) }
        }
    }

    /// The answer's body as it comes, refused past its limit.
    private final class Body {
        var data = Data()
        let limit: Int
        var overLimit = false

        init(limit: Int) { self.limit = limit }
    }

    /// Runs the call to its end: blocks its thread until then.
    func run() -> Result<HTTPResponse, HTTPCallError> {
        guard Self.initialized else { return .failure(.cannotStart("libcurl could not be initialized")) }
        guard request.url.hasPrefix("http://") || request.url.hasPrefix("https://") else {
            return .failure(.invalidURL("'\(request.url)' is not an http or https URL"))
        }
        // What the handle points at is made first, so that it is freed after the handle.
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorText.deallocate() }
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        for (name, value) in request.headers {
            headers = curl_slist_append(headers, "\(name): \(value)")
        }
        // No "Expect: 100-continue" wait before a large body: the servers answer at once.
        headers = curl_slist_append(headers, "Expect:")
        guard let easy = curl_easy_init() else { return .failure(.cannotStart("curl_easy_init failed")) }
        defer { curl_easy_cleanup(easy) }
        let body = Body(limit: bodyLimit)
        let milliseconds = max(1, timeout.inMilliseconds)

        let failed = configure(easy, headers: headers, errorText: errorText, body: body, milliseconds: milliseconds)
        guard failed == CURLE_OK else {
            return .failure(.cannotStart("libcurl refused an option: \(String(cString: curl_easy_strerror(failed)))"))
        }

        guard let multi = curl_multi_init() else { return .failure(.cannotStart("curl_multi_init failed")) }
        curl_multi_add_handle(multi, easy)
        state.withLock { $0.multi = multi }
        defer {
            state.withLock { $0.multi = nil }
            curl_multi_remove_handle(multi, easy)
            curl_multi_cleanup(multi)
        }
        return withExtendedLifetime(body) {
            drive(multi, easy: easy, body: body, errorText: errorText, milliseconds: milliseconds)
        }
    }

    /// Sets the transfer's options on `easy`: the request, its limits, where the body goes.
    /// Returns the first option libcurl refused, `CURLE_OK` if none.
    private func configure(
        _ easy: UnsafeMutableRawPointer, headers: UnsafeMutablePointer<curl_slist>?,
        errorText: UnsafeMutablePointer<CChar>, body: Body, milliseconds: Int64
    ) -> CURLcode {
        var failed: CURLcode = CURLE_OK
        func set(_ result: CURLcode) { if failed == CURLE_OK { failed = result } }
        set(bureau_curl_set_string(easy, CURLOPT_URL, request.url))
        set(bureau_curl_set_long(easy, CURLOPT_NOSIGNAL, 1))
        set(bureau_curl_set_long(easy, CURLOPT_TIMEOUT_MS, Int(clamping: milliseconds)))
        set(bureau_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(clamping: milliseconds)))
        set(bureau_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(bureau_curl_set_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        set(bureau_curl_set_string(easy, CURLOPT_USERAGENT, "bureau"))
        set(bureau_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorText))
        set(bureau_curl_set_pointer(easy, CURLOPT_HTTPHEADER, headers))
        set(bureau_curl_set_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(bodyLimit)))
        set(
            bureau_curl_set_write(
                easy,
                { data, size, count, context in
                    guard let context else { return 0 }
                    let body = Unmanaged<Body>.fromOpaque(context).takeUnretainedValue()
                    let bytes = size * count
                    guard body.data.count + bytes <= body.limit else {
                        body.overLimit = true
                        return 0
                    }
                    if let data, bytes > 0 {
                        body.data.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: bytes)
                    }
                    return bytes
                }))
        set(bureau_curl_set_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(body).toOpaque()))
        switch request.method {
        case "GET":
            set(bureau_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 1))
            set(bureau_curl_set_long(easy, CURLOPT_MAXREDIRS, 5))
        case "POST":
            set(bureau_curl_set_long(easy, CURLOPT_POST, 1))
        default:
            set(bureau_curl_set_string(easy, CURLOPT_CUSTOMREQUEST, request.method))
        }
        if request.method != "GET" || request.body != nil {
            let data = request.body ?? Data()
            set(bureau_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(data.count)))
            // Copied by curl: the bytes need not outlive this call.
            set(
                data.withUnsafeBytes {
                    bureau_curl_set_pointer(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress ?? UnsafeRawPointer(errorText))
                })
        }
        return failed
    }

    /// Runs the transfer on `multi` until it ends or ``cancel()`` is called; then says what came
    /// of it.
    private func drive(
        _ multi: UnsafeMutableRawPointer, easy: UnsafeMutableRawPointer, body: Body,
        errorText: UnsafeMutablePointer<CChar>,
        milliseconds: Int64
    ) -> Result<HTTPResponse, HTTPCallError> {
        var finished: CURLcode?
        while finished == nil {
            if state.withLock({ $0.cancelled }) { return .failure(.cancelled) }
            var running: Int32 = 0
            let performed = curl_multi_perform(multi, &running)
            guard performed == CURLM_OK else {
                return .failure(.interrupted(String(cString: curl_multi_strerror(performed))))
            }
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                if message.pointee.msg == CURLMSG_DONE { finished = bureau_curl_message_result(message) }
            }
            if finished == nil {
                // Returns when a socket is ready, when curl's own timers (the timeout) are
                // due, or when cancel() wakes it; at most a second.
                _ = curl_multi_poll(multi, nil, 0, 1000, nil)
            }
        }
        let code = finished ?? CURLE_OK
        guard code == CURLE_OK else {
            return .failure(
                classify(
                    code, easy: easy, body: body, reason: String(cString: errorText), milliseconds: milliseconds))
        }
        var status = 0
        _ = bureau_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, body: body.data))
    }

    /// What a failed transfer means for the caller: sent or not, and why.
    private func classify(
        _ code: CURLcode, easy: UnsafeMutableRawPointer, body: Body, reason: String, milliseconds: Int64
    ) -> HTTPCallError {
        let said = reason.isEmpty ? String(cString: curl_easy_strerror(code)) : reason
        // Zero until the connection (and its TLS) is made and the request about to be written.
        var pretransfer: curl_off_t = 0
        _ = bureau_curl_get_offset(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
        switch code {
        case CURLE_COULDNT_CONNECT:
            var osError = 0
            _ = bureau_curl_get_long(easy, CURLINFO_OS_ERRNO, &osError)
            if osError == Int(ECONNREFUSED) { return .refused(address: Self.address(of: request.url)) }
            return .notConnected(said)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_SSL_CONNECT_ERROR,
            CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return .notConnected(said)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .invalidURL(said)
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge(limit: bodyLimit)
        case CURLE_WRITE_ERROR where body.overLimit:
            return .tooLarge(limit: bodyLimit)
        case CURLE_OPERATION_TIMEDOUT:
            if pretransfer == 0 { return .notConnected("no connection within \(milliseconds) ms") }
            return .timedOut(milliseconds: milliseconds)
        default:
            if pretransfer == 0 { return .notConnected(said) }
            return .interrupted(said)
        }
    }

    /// `host:port` of an http or https URL, the port its scheme's when it names none.
    static func address(of url: String) -> String {
        let parsed = URLComponents(string: url)
        let port = parsed?.port ?? (parsed?.scheme == "https" ? 443 : 80)
        return "\(parsed?.host ?? url):\(port)"
    }
}
