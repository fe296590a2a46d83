/// What a booking service did with the call made under an idempotency key.
public enum BookingResolution: Sendable, Equatable {
    /// The call was done: the booking as the call was answered, with its confirmation code and
    /// status ("confirmed" for a booking, "cancelled" for a cancellation).
    case done(confirmationCode: String, status: String)
    /// Nothing was done under the key, and nothing will be: a call with it is refused from now
    /// on. With the service's words.
    case nothingDone(String)
}
