import YAMLFile

/// A file that says where a bus on another machine is, for `--bus FILE`: either a connection
/// file holding what a deployment file's `bus:` holds, at its top level,
///
///     url: tcp://198.51.100.1:7400
///     server_key: bus.pub        # relative to the file
///     client_key: laptop.key
///
/// or a deployment file with a `bus:` section, so that a host's commands can be pointed at the
/// file its `bureau up` runs. Errors name the file, the line and the field.
public enum ConnectionFile {
    public static func parse(_ text: String, file: String) throws(DeploymentError) -> Deployment.RemoteBus {
        let reader = YAMLReader(file: file)
        let root = try reader.root(of: text)
        let top = try reader.mapping(root, field: nil)
        if top["processes"] != nil {
            guard let remote = try DeploymentFile.parse(text, file: file).remoteBus else {
                throw reader.error(root.mark?.line, "bus", "is missing: this deployment runs its own bus")
            }
            return remote
        }
        return try reader.remoteBus(
            root, file: file, maximumWait: DeploymentFile.Limits.readyTimeoutSeconds, field: nil)
    }
}
