package io.nvmf4j.engine;

/**
 * Receives what an engine's data path does, for metrics: namespaces, controllers and commands cross this seam as
 * the plain views {@link IoNamespace}, {@link IoController} and {@link IoCommand}, subsystems by NQN. Called on
 * poll-group threads on every command, so an implementation must neither block nor allocate; the default does
 * nothing.
 */
public interface IoObserver {
    /** Does nothing. */
    IoObserver NONE = new IoObserver() {
    };

    /**
     * A command completed on an I/O queue.
     *
     * @param ns           the namespace, or null when the command named none that exists
     * @param opcode       NVM opcode
     * @param bytes        data bytes moved (0 for commands without data or that failed before moving any)
     * @param latencyNanos from capsule arrival to the response being sent (NVMe/TCP: flushed to the socket, with one
     *                     clock reading for a read batch's commands; RDMA: its send being built)
     * @param status       NVMe status (0 = success)
     */
    default void ioCompleted(IoNamespace ns, int opcode, int bytes, long latencyNanos, int status) {
    }

    /**
     * A command completed on an I/O queue, with where it came from ({@link IoCommand}: its controller, host and
     * subsystem, queue, namespace, opcode, NSID, SLBA, NLB and status). The command is an object the engine reuses:
     * read it during the call, never keep it. By default {@link #ioCompleted(IoNamespace, int, int, long, int)}.
     *
     * @param bytes        as {@link #ioCompleted(IoNamespace, int, int, long, int)}
     * @param latencyNanos as {@link #ioCompleted(IoNamespace, int, int, long, int)}
     * @param nowNanos     the {@link System#nanoTime()} reading the latency ends at
     */
    default void ioCompleted(IoCommand cmd, int bytes, long latencyNanos, long nowNanos) {
        ioCompleted(cmd.namespace(), cmd.opcode(), bytes, latencyNanos, cmd.status());
    }

    /** A command completed on an admin queue with an error status. */
    default void adminError(String subsystemNqn, int opcode, int status) {
    }

    /** A transport connection (queue) opened or closed. */
    default void connectionOpened(String transport) {
    }

    default void connectionClosed(String transport) {
    }

    /** A queue was bound to a controller by Connect (qid 0 = admin). */
    default void queueConnected(String transport, int qid) {
    }

    /** A transport-level protocol error ended a connection (TCP: the FES of the C2HTermReq). */
    default void transportError(String transport, int fes) {
    }

    /** {@link #connectionRefused}'s limit: the listener has {@code maxConnectionsPerListener} connections. */
    String LIMIT_PER_LISTENER = "maxConnectionsPerListener";
    /** {@link #connectionRefused}'s limit: the peer's address has {@code maxConnectionsPerHost} connections. */
    String LIMIT_PER_HOST = "maxConnectionsPerHost";

    /**
     * A connection refused at accept by a listener's limit: {@code limit} is the field that refused it,
     * {@link #LIMIT_PER_LISTENER} or {@link #LIMIT_PER_HOST}.
     */
    default void connectionRefused(String transport, String limit) {
    }

    /** An admin Connect refused with Connect Controller Busy: every cntlid of the subsystem's range is in use. */
    default void controllerLimitReached(String subsystemNqn) {
    }

    /** A connection was closed because it had not completed its handshake (TCP: ICReq and Connect) in time. */
    default void connectTimedOut(String transport) {
    }

    /** A controller was torn down because its keep-alive timer expired. */
    default void keepAliveExpired(String subsystemNqn) {
    }

    /**
     * A DH-HMAC-CHAP authentication failed (a refused Connect for an unreadable key file included).
     *
     * @param reason the AUTH_Failure reason code explanation's short name (see {@code AuthMessages.reason})
     */
    default void authFailed(String subsystemNqn, String reason) {
    }
}
