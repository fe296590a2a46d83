import BureauSchemas

public typealias AlertSetRequested = Bureau_Alerts_AlertSetRequested
public typealias AlertClearRequested = Bureau_Alerts_AlertClearRequested
public typealias AlertArmed = Bureau_Alerts_AlertArmed
public typealias AlertRejected = Bureau_Alerts_AlertRejected
public typealias AlertTriggered = Bureau_Alerts_AlertTriggered
public typealias AlertRearmed = Bureau_Alerts_AlertRearmed
public typealias AlertCleared = Bureau_Alerts_AlertCleared
public typealias AlertDirection = Bureau_Alerts_Direction

extension AlertSetRequested {
    public init(base: String, quote: String, direction: AlertDirection, threshold: String) {
        self.init()
        self.base = base
        self.quote = quote
        self.direction = direction
        self.threshold = threshold
    }
}

extension AlertClearRequested {
    public init(alertID: String) {
        self.init()
        self.alertID = alertID
    }
}

extension AlertCleared {
    public init(alertID: String) {
        self.init()
        self.alertID = alertID
    }
}
