import Foundation
import Hummingbird
import Logging

struct ProblemBody: Codable {
    var error: String
    var field: String?
}
