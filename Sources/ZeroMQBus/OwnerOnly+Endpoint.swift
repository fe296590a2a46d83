import EventLog

extension OwnerOnly {
    /// Makes the socket file of an `ipc://` endpoint just bound owner-only, as its run directory
    /// is; an endpoint of another transport has no file and is left as it is.
    static func restrictSocket(of endpoint: String) throws(Problem) {
        guard endpoint.hasPrefix("ipc://") else { return }
        try restrict(String(endpoint.dropFirst("ipc://".count)))
    }
}
