package io.nvmf4j.core;

import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.nvme.NvmeStatus;

/**
 * What the NVMe/TCP and NVMe/RDMA queues share: the binding to a controller (queue id, size, the submission
 * queue head the responses report), the Connect in progress, the listener and limits, the metrics of each
 * completed command, and the stack of free request slots. The transport keeps its own request table (its
 * request type) and reads the free slot indexes from here.
 */
public abstract class QueueBase implements Queue {
    protected final ListenerConfig listener;
    protected final TransportLimits limits;
    protected final IoObserver observer;
    /** The transport name the observer gets (the registry's, never a second spelling). */
    private final String transport;

    protected Controller controller;
    private Request connectInProgress;
    protected int qid;
    protected int sqsize;
    /** The submission queue head the next response reports (0 until Connect; wraps at SQSIZE + 1). */
    protected int sqhd;

    /** Indexes of the free request slots; {@link #freeTop} of them are valid. */
    private int[] freeStack = new int[0];
    private int freeTop;

    /** Made at the first command QoS holds back. */
    private ThrottledRequests throttled;

    protected QueueBase(String transport, ListenerConfig listener, TransportLimits limits, IoObserver observer) {
        this.transport = transport;
        this.listener = listener;
        this.limits = limits;
        this.observer = observer;
    }

    @Override
    public final ThrottledRequests throttled() {
        if (throttled == null) {
            throttled = new ThrottledRequests(this);
        }
        return throttled;
    }

    @Override
    public final int qid() {
        return qid;
    }

    @Override
    public final Request connectInProgress() {
        return connectInProgress;
    }

    @Override
    public final void connectInProgress(Request connect) {
        this.connectInProgress = connect;
    }

    @Override
    public final Controller controller() {
        return controller;
    }

    @Override
    public final ListenerConfig listener() {
        return listener;
    }

    @Override
    public final TransportLimits limits() {
        return limits;
    }

    @Override
    public void bind(Controller controller, int qid, int sqsize, boolean sqFlowControlDisabled) {
        this.controller = controller;
        this.qid = qid;
        this.sqsize = sqsize;
        sqhd = 1 % (sqsize + 1); // the Connect itself was the first entry consumed
        observer.queueConnected(transport, qid);
    }

    /** A submission queue entry was consumed: the head moves on (after Connect; it wraps at SQSIZE + 1). */
    protected final void advanceSqhd() {
        if (sqsize > 0) {
            sqhd = sqhd == sqsize ? 0 : sqhd + 1;
        }
    }

    /** The metrics of a completed command: an I/O's size and latency, an admin command's error. */
    protected final void observe(Request req) {
        observe(req, System.nanoTime());
    }

    /** {@link #observe(Request)} with the clock reading ({@link System#nanoTime()}) at which its response went out. */
    protected final void observe(Request req, long nowNanos) {
        if (controller == null) {
            return;
        }
        boolean ok = NvmeStatus.isSuccess(req.status);
        if (qid > 0) {
            int bytes = ok && req.xferDir != Request.XFER_NONE ? req.dataLength : 0;
            observer.ioCompleted(req, bytes, nowNanos - req.startNanos, nowNanos);
        } else if (!ok) {
            observer.adminError(controller.subsystem().nqn(), req.sqe.opcode(), req.status);
        }
    }

    // ---------------------------------------------------------------- free request slots

    /** Room for slots up to index {@code size - 1}; slots {@code from .. size - 1} are new and free. */
    protected final void growFreeSlots(int from, int size) {
        if (size > freeStack.length) {
            freeStack = java.util.Arrays.copyOf(freeStack, size);
        }
        for (int i = size - 1; i >= from; i--) {
            freeStack[freeTop++] = i;
        }
    }

    /** A free slot's index, or -1 when every slot is taken. */
    protected final int takeFreeSlot() {
        return freeTop == 0 ? -1 : freeStack[--freeTop];
    }

    protected final void freeSlot(int index) {
        freeStack[freeTop++] = index;
    }

    protected final int freeSlots() {
        return freeTop;
    }

    /** The transport's name, as the observer gets it. */
    protected final String transport() {
        return transport;
    }
}
