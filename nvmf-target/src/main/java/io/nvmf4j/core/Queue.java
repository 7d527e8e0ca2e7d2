package io.nvmf4j.core;

import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.ListenerConfig;

import java.util.concurrent.ScheduledExecutorService;

/**
 * A submission/completion queue pair as the core sees it; each transport implements it. All methods
 * except {@link #disconnect(String)} and {@link #executor()} are called on the queue's poll group thread.
 */
public interface Queue {
    /** Queue id: 0 for the admin queue. Valid after Connect. */
    int qid();

    /** The controller after a successful Connect, else null. */
    Controller controller();

    /** Binds the queue to its controller (Connect). */
    void bind(Controller controller, int qid, int sqsize, boolean sqFlowControlDisabled);

    /**
     * The Connect this queue is carrying out, from its parse until its completion (its data may still be on
     * the way), or null. Set and cleared by the command layer only (queue thread): a second Connect in that
     * window is refused, so one queue never binds two controllers.
     */
    Request connectInProgress();

    void connectInProgress(Request connect);

    /** Sends the response of a completed request and recycles it. */
    void complete(Request req);

    /**
     * Whether the connection has closed and the queue has let its controller go (or had none): a queue that
     * binds a controller after that would hold its qid with nothing left to free it.
     */
    boolean isClosed();

    /** Closes the connection (thread-safe; runs on the poll group). */
    void disconnect(String reason);

    /** The poll group thread that owns this queue. */
    ScheduledExecutorService executor();

    /** The listener the connection arrived on. */
    ListenerConfig listener();

    /** The transport of this queue's listener ({@code tcp}, {@code rdma}) as log lines name it, {@code ?} without one. */
    default String listenerTransport() {
        return listener() == null ? "?" : listener().transport;
    }

    /** Transport limits that Identify reports (in-capsule size, MDTS, queue depth). */
    TransportLimits limits();

    /** Peer address, for logs and the controller list. */
    String peer();

    /**
     * The TLS PSK identity this queue's secure channel was set up with (NVMe/TCP with TLS), or null for a queue
     * without one: a Connect on it must name that identity's host and subsystem.
     */
    default TlsPsk.Identity secureChannelIdentity() {
        return null;
    }

    /** The commands QoS holds back on this queue (poll group thread only). */
    ThrottledRequests throttled();
}
