import BureauSchemas

public typealias AmountSetRequested = Bureau_Converter_AmountSetRequested
public typealias AmountChanged = Bureau_Converter_AmountChanged
public typealias AmountRejected = Bureau_Converter_AmountRejected

extension AmountSetRequested {
    public init(value: String, currency: String) {
        self.init()
        self.value = value
        self.currency = currency
    }
}

extension AmountChanged {
    public init(value: String, currency: String) {
        self.init()
        self.value = value
        self.currency = currency
    }
}

extension AmountRejected {
    public init(value: String, currency: String, reason: Reason, message: String) {
        self.init()
        self.value = value
        self.currency = currency
        self.reason = reason
        self.message = message
    }
}
