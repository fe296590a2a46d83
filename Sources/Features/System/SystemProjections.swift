import BureauSchemas
import Bus
import Foundation
import Runtime

public typealias ErrorRaised = Bureau_System_ErrorRaised
public typealias ProcessStarted = Bureau_System_ProcessStarted
public typealias ProcessExited = Bureau_System_ProcessExited
