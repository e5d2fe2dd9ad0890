/// A failure of the harness or of a command it ran. Thrown to end the test with a message.
struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong, with whatever output explains it.
    var description: String

    /// Creates an error with a message.
    ///
    /// - Parameter description: what went wrong.
    init(_ description: String) {
        self.description = description
    }
}
