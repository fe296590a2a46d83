/// Why a process could not be started.
public struct LaunchError: Error, CustomStringConvertible {
    public let description: String
}
