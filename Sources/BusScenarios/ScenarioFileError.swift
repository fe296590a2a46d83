import BureauSchemas
import Bus
import Foundation
import Runtime
import YAMLFile
import Yams

/// What is wrong in a scenario file, and where: the line and the field.
public typealias ScenarioFileError = YAMLFileError
