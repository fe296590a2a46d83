import Bus
import Foundation
import Logging
import Runtime
import Supervisor
import ZeroMQBus

extension UpCommand {
    /// The routes of the deployment's `setup:` URLs, checked before anything starts: a URL the
    /// build cannot route stops `up` at once, naming it.
    static func setupRoutes(_ deployment: Deployment) throws -> [CommandRouter.Route] {
        let router = Composition.registry().router
        return try deployment.setup.enumerated().map { index, url in
            do {
                return try router.route(url)
            } catch {
                throw usageError("setup[\(index)]: \(error)")
            }
        }
    }

    /// Sends the deployment's `setup:` commands once every process is ready, in order, each
    /// waiting for its answer: a refusal or a missing answer is logged as an error and the rest
    /// are still sent (the deployment runs on, as it would without them).
    static func sendSetup(
        _ routes: [CommandRouter.Route], deployment: Deployment, location: BusLocation, logger: Logger
    ) async {
        guard !routes.isEmpty else { return }
        do {
            var options = ZeroMQBusClient.Options(process: "setup")
            options.publishTimeout = .seconds(30)
            let client =
                if let remote = deployment.remoteBus {
                    try ZeroMQBusClient(
                        remote: try ZeroMQBus.RemoteBus(
                            url: remote.url, serverKeyFile: remote.serverKeyFile, clientKeyFile: remote.clientKeyFile),
                        options: options, logger: logger)
                } else {
                    try ZeroMQBusClient(location: location, options: options, logger: logger)
                }
            defer { client.close() }
            for (route, url) in zip(routes, deployment.setup) {
                let (_, answers, answer) = try await SendCommand.send(
                    route, through: client, until: .now + .seconds(30))
                answers.cancel()
                guard let answer else {
                    logger.error("setup: no answer within 30 s", metadata: ["setup.url": "\(url)"])
                    continue
                }
                if AnswerClassifier(route.command).verdict(type: answer.type)?.isFailure == true {
                    logger.error("setup: refused", metadata: ["setup.url": "\(url)", "setup.answer": "\(answer.line)"])
                } else {
                    logger.info("setup", metadata: ["setup.url": "\(url)", "setup.answer": "\(answer.type)"])
                }
            }
        } catch {
            logger.error("setup: could not send the setup commands", metadata: ["setup.error": "\(error)"])
        }
    }
}
