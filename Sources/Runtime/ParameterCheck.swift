/// A value checked against its parameter's kind.
enum ParameterCheck {
    case valid(String)
    case invalid(String)
}
