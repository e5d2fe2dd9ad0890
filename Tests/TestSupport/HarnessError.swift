/// A failure of the harness or of a command it ran. Thrown to end the test with a message.
package struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong, with whatever output explains it.
    package var description: String

    /// Creates an error with a message.
    ///
    /// - Parameter description: what went wrong.
    package init(_ description: String) {
        self.description = description
    }
}
