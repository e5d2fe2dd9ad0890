import Dispatch

/// A Dispatch read source's whole lifetime in one place, for an object that owns a descriptor
/// and reads it on a serial queue: started once, cancelled once, and the descriptor's clean-up
/// run by the cancel handler, after libdispatch has stopped watching it. A source that never
/// started is resumed before it is cancelled (libdispatch traps on releasing a suspended
/// source); an owner that never cancelled has it cancelled at `deinit`, from whatever thread lets
/// go last.
///
/// Confined to `queue`: ``start(_:)`` and ``cancel()`` are called there, the handler runs there.
package final class DescriptorReadSource: @unchecked Sendable {
    private let queue: DispatchQueue
    private let source: DispatchSourceRead
    /// Whether the source was resumed (by ``start(_:)``, or by ``cancel()`` before it).
    private var started = false

    /// A source watching `descriptor` on `queue`, which calls `cleanUp` (closing the
    /// descriptor, freeing buffers) once cancelled; nothing is read before ``start(_:)``.
    package init(descriptor: Int32, queue: DispatchQueue, cleanUp: @escaping @Sendable () -> Void) {
        self.queue = queue
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setCancelHandler(handler: cleanUp)
    }

    /// Starts calling `handler` on the queue whenever the descriptor is readable; a second call
    /// does nothing.
    package func start(_ handler: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !started else { return }
        started = true
        source.setEventHandler(handler: handler)
        source.activate()
    }

    /// Stops: no handler runs after this returns (it is called on the queue the handler runs on);
    /// the clean-up follows.
    package func cancel() {
        dispatchPrecondition(condition: .onQueue(queue))
        if !started {
            started = true
            source.activate()
        }
        source.cancel()
    }

    deinit {
        guard !source.isCancelled else { return }
        if !started { source.activate() }
        source.cancel()
    }
}
