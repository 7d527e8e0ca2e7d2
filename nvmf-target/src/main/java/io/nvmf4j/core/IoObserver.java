package io.nvmf4j.core;

/**
 * Receives what the data path does, for metrics. Called on poll-group threads on every command, so an
 * implementation must neither block nor allocate; the default does nothing.
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
    default void ioCompleted(Namespace ns, int opcode, int bytes, long latencyNanos, int status) {
    }

    /**
     * A command completed on an I/O queue, with where it came from: {@code req.controller()} (its host and
     * subsystem), {@code req.queue().qid()}, {@code req.ns}, the command ({@code req.sqe}: opcode, nsid, SLBA, NLB)
     * and {@code req.status}. The request is a slot the queue reuses: read it during the call, never keep it.
     * By default {@link #ioCompleted(Namespace, int, int, long, int)}.
     *
     * @param bytes        as {@link #ioCompleted(Namespace, int, int, long, int)}
     * @param latencyNanos as {@link #ioCompleted(Namespace, int, int, long, int)}
     * @param nowNanos     the {@link System#nanoTime()} reading the latency ends at
     */
    default void ioCompleted(Request req, int bytes, long latencyNanos, long nowNanos) {
        ioCompleted(req.ns, req.sqe.opcode(), bytes, latencyNanos, req.status);
    }

    /** A command completed on an admin queue with an error status. */
    default void adminError(Subsystem subsystem, int opcode, int status) {
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

    /**
     * A connection refused at accept by a listener's limit: {@code limit} is the field that refused it,
     * {@code maxConnectionsPerListener} or {@code maxConnectionsPerHost}.
     */
    default void connectionRefused(String transport, String limit) {
    }

    /** An admin Connect refused with Connect Controller Busy: every cntlid of the subsystem's range is in use. */
    default void controllerLimitReached(Subsystem subsystem) {
    }

    /** A connection was closed because it had not completed its handshake (TCP: ICReq and Connect) in time. */
    default void connectTimedOut(String transport) {
    }

    /** A controller was torn down because its keep-alive timer expired. */
    default void keepAliveExpired(Subsystem subsystem) {
    }

    /**
     * A DH-HMAC-CHAP authentication failed (a refused Connect for an unreadable key file included).
     *
     * @param reason the AUTH_Failure reason code explanation's short name (see {@code AuthMessages.reason})
     */
    default void authFailed(Subsystem subsystem, String reason) {
    }
}
