package io.nvmf4j.engine;

/**
 * A namespace as an engine's data path reports it to an {@link IoObserver}: the same object for every command of
 * one namespace while it exists, so an observer may key what it keeps on it, and ask the engine's
 * {@link Engine#subsystemOf(IoNamespace)} which subsystem it belongs to.
 */
public interface IoNamespace {
    /** The namespace ID. */
    int nsid();

    /** Failed attempts of its device to make acknowledged writes durable (after the first, writes fail). */
    long durabilityErrors();

    /** I/O commands its QoS limits held back (each waited for its budget). */
    long qosDelayed();

    /** Nanoseconds I/O commands waited for their QoS budget, summed. */
    long qosDelayNanos();

    /** I/O commands waiting for their QoS budget now. */
    long qosWaiting();
}
