package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.QueueBase;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.nvme.Cqe;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.transport.rdma.RdmaRequest.State;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One NVMe/RDMA queue pair, owned for life by one poll-group thread (every method but
 * {@link #disconnect} and {@link #executor} runs there). The request state machine is written down in
 * {@link RdmaRequest.State} and driven by {@link #process}; each state has its own method. The verbs
 * side (posting, receive buffers, teardown) is behind {@link Wire}, so the machine runs in unit tests
 * without a device.
 *
 * <p>Closing (host disconnect, timewait exit, a failed work request, a QP error event, controller
 * teardown) drains as SPDK's qpair destroy path and Linux's {@code ib_drain_qp} do: the QP goes to the
 * error state, so every posted work request completes (flushed, or done just before); requests that have
 * nothing posted are forced to COMPLETED so that cleanup runs on the normal path; a request with RDMA
 * READs or WRITEs + SEND posted keeps its data buffer and response slot until the completion of its
 * last work request (signalled, and the send queue completes in order, so every earlier one is done
 * too); requests in the block device wait for the device. The QP is destroyed only when every request
 * is FREE and the device reported the last WQE reached ({@link #onLastWqeReached}: the QP, attached to
 * the shared receive queue, holds none of its receive buffers any more). Buffers are reused only after
 * every work request that referenced them has completed.
 *
 * <p>What one queue pair may hold of its poll group's shared receive queue is bounded: at most
 * {@code maxParked} capsules wait for a request slot in their receive buffers; one more closes it.
 */
final class RdmaQueue extends QueueBase {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaQueue.class);
    /** The transport name the observer gets (the registry's, never a second spelling). */
    static final String TRANSPORT = RdmaTransport.TYPE.name();
    /** A response slot holds one completion queue entry ({@link Cqe}). */
    static final int CQE_SIZE = Cqe.SIZE;

    /** The verbs side of a queue pair (and of its poll group). */
    interface Wire {
        /** RDMA READs of {@code req.sgl} into its data buffer; the last completion names the request. */
        int postReads(RdmaRequest req);

        /** {@code writes} RDMA WRITEs of the data buffer (0 for none), then the SEND of the response slot. */
        int postResponse(RdmaRequest req, int writes);

        /** Capsules: the receive region, the offset of buffer {@code i}, and its repost. */
        ByteBuf recvBuffer();

        /**
         * The in-capsule data area of receive buffer {@code recvIndex} (from byte 64 of the capsule, the
         * capsule's data size long): a slice made once per receive buffer, never released.
         */
        ByteBuf capsuleData(int recvIndex);

        int recvOffset(int recvIndex);

        void repostRecv(int recvIndex);

        /**
         * Disconnects the CM id and moves the QP to the error state (outstanding WRs get flushed). The
         * wire reports {@link #onLastWqeReached} later: the device's event, or a timeout where the
         * device raises none.
         */
        void shutdown();

        /**
         * Frees the QP and everything of this queue pair; called once, when every request is FREE and
         * the last WQE was reached.
         */
        void destroy();
    }

    private final CommandDispatcher dispatcher;
    private final ScheduledExecutorService executor;
    private final DataBuffers buffers;
    private final String peer;
    private final int depth;
    private final int readDepth;
    private final int maxParked;
    private final RdmaRequest[] table;
    private final ArrayDeque<RdmaRequest> readWaiters;
    /** Capsules waiting for a request slot (receive index and length), a ring of up to {@code maxParked}. */
    private final int[] parkedRecv;
    private final int[] parkedLength;
    private int parkedHead;
    private int parkedCount;
    /** Response slots, {@link #CQE_SIZE} bytes per request, in request-index order. */
    private final ByteBuf responses;
    private Wire wire;

    /** The qid the CM request asked for: the SQID of answers before a Connect binds the queue. */
    private int cmQid;
    private int readsOutstanding;
    private boolean closing;
    private boolean lastWqeReached;
    private boolean destroyed;

    RdmaQueue(CommandDispatcher dispatcher, TransportLimits limits, ListenerConfig listener, IoObserver observer,
              ScheduledExecutorService executor, DataBuffers buffers, String peer, int depth, int readDepth,
              int maxParked, ByteBuf responses) {
        super(TRANSPORT, listener, limits, observer);
        this.dispatcher = dispatcher;
        this.executor = executor;
        this.buffers = buffers;
        this.peer = peer;
        this.depth = depth;
        this.readDepth = readDepth;
        this.maxParked = Math.max(1, Math.min(maxParked, depth));
        this.responses = responses;
        int n = requestCount(depth);
        this.table = new RdmaRequest[n];
        for (int i = 0; i < n; i++) {
            table[i] = new RdmaRequest(this, i);
        }
        growFreeSlots(0, n);
        this.readWaiters = new ArrayDeque<>(n);
        this.parkedRecv = new int[this.maxParked];
        this.parkedLength = new int[this.maxParked];
    }

    /** Requests per queue pair: the depth plus room for the AERs the host keeps outstanding. */
    static int requestCount(int depth) {
        return depth + Controller.AERL + 1;
    }

    void attach(Wire wire) {
        this.wire = wire;
    }

    int depth() {
        return depth;
    }

    int readDepth() {
        return readDepth;
    }

    boolean isClosing() {
        return closing;
    }

    boolean isDestroyed() {
        return destroyed;
    }

    RdmaRequest request(int index) {
        return index >= 0 && index < table.length ? table[index] : null;
    }

    int responseOffset(RdmaRequest req) {
        return req.index * CQE_SIZE;
    }

    DataBuffers buffers() {
        return buffers;
    }

    // ---------------------------------------------------------------- Queue

    /**
     * The qid of the CM request this queue was accepted for. Answers before a Connect binds the queue (a refused
     * Connect) name it as their SQID: the queue the command came on, not 0.
     */
    void cmQid(int qid) {
        this.cmQid = qid;
    }

    @Override
    public ScheduledExecutorService executor() {
        return executor;
    }

    @Override
    public String peer() {
        return peer;
    }

    @Override
    public boolean isClosed() {
        return closing;
    }

    @Override
    public void disconnect(String reason) {
        executor.execute(() -> close(reason));
    }

    // ---------------------------------------------------------------- events from the poll group

    /** A capsule arrived in receive buffer {@code recvIndex} ({@code byteLen} bytes). */
    void onCapsule(int recvIndex, int byteLen) {
        if (closing) {
            wire.repostRecv(recvIndex);
            return;
        }
        if (byteLen < CQE_SIZE * 4) {
            wire.repostRecv(recvIndex);
            close("capsule of " + byteLen + " bytes, shorter than an SQE");
            return;
        }
        advanceSqhd();
        if (freeSlots() == 0 || parkedCount > 0) {
            park(recvIndex, byteLen); // behind those already waiting: commands start in arrival order
            runParked();
            return;
        }
        start(recvIndex, byteLen);
    }

    /**
     * Every request slot is taken: the capsule waits in its receive buffer, in arrival order. A host may
     * send a new command as soon as it has a response, before this side has polled the response SEND's
     * completion (which frees the slot), for example when the ACK was delayed or lost. Those receive
     * buffers belong to the poll group's shared receive queue, so one queue pair may keep at most
     * {@code maxParked} of them: one more is a host sending past its queue size or not acknowledging its
     * responses, and closes the queue pair (the host sees a disconnect) before it starves the others.
     */
    private void park(int recvIndex, int byteLen) {
        if (parkedCount == parkedRecv.length) {
            wire.repostRecv(recvIndex);
            LOG.info("{}: closing: a capsule beyond the {} that may wait for a request slot (rdma.maxParkedCapsules,"
                + " queue depth {}); the host sends past its queue size or does not acknowledge responses", this,
                parkedRecv.length, depth);
            close("more than " + parkedRecv.length + " capsules waiting for a request slot");
            return;
        }
        int tail = (parkedHead + parkedCount) % parkedRecv.length;
        parkedRecv[tail] = recvIndex;
        parkedLength[tail] = byteLen;
        parkedCount++;
    }

    /** Starts parked capsules while request slots are free (called where a slot was freed, at top level). */
    private void runParked() {
        while (parkedCount > 0 && freeSlots() > 0 && !closing) {
            int recvIndex = parkedRecv[parkedHead];
            int byteLen = parkedLength[parkedHead];
            parkedHead = (parkedHead + 1) % parkedRecv.length;
            parkedCount--;
            start(recvIndex, byteLen);
        }
    }

    private void start(int recvIndex, int byteLen) {
        RdmaRequest req = table[takeFreeSlot()];
        req.reset(wire.recvBuffer(), wire.recvOffset(recvIndex));
        req.startNanos = System.nanoTime();
        req.recvIndex = recvIndex;
        req.capsuleDataLength = byteLen - 64;
        req.bufferIndex = -1;
        req.readsOutstanding = 0;
        req.state = State.NEW;
        process(req);
    }

    /**
     * An RDMA READ of request {@code index} completed (or failed or was flushed: {@code ok} false). Only
     * the completion of its last READ ({@code last}, the signalled one) moves the request on: the send
     * queue completes in order, so every earlier READ is done then too, and none writes into the data
     * buffer any more. An earlier one (unsignalled: it completes only when it fails) closes the queue.
     */
    void onReadComplete(int index, boolean last, boolean ok) {
        if (!ok) {
            close("RDMA READ failed");
        }
        if (!last) {
            return;
        }
        RdmaRequest req = request(index);
        if (req == null || req.state != State.TRANSFERRING_HOST_TO_CONTROLLER) {
            return;
        }
        readsOutstanding -= req.readsOutstanding;
        req.readsOutstanding = 0;
        req.state = ok && !closing ? State.READY_TO_EXECUTE : State.COMPLETED;
        process(req);
        runReadWaiters();
    }

    /** An RDMA WRITE (unsignalled: completes only when it fails or is flushed); its SEND follows. */
    void onWriteComplete(int index, boolean ok) {
        if (!ok) {
            close("RDMA WRITE failed");
        }
    }

    /**
     * The response SEND of request {@code index} completed (or failed or was flushed): the last work
     * request of the request, so its WRITEs are done and its data buffer and response slot are free.
     */
    void onSendComplete(int index, boolean ok) {
        if (!ok) {
            close("response SEND failed");
        }
        RdmaRequest req = request(index);
        if (req == null || req.state != State.COMPLETING) {
            return;
        }
        req.state = State.COMPLETED;
        process(req);
        runParked();
    }

    /** A work request failed: the queue pair is unusable. */
    void onWorkRequestError(String what) {
        close(what);
    }

    /**
     * The device reported the last WQE reached for this QP (or the wire gave up waiting for it): the QP,
     * in the error state, takes no more receives from the shared receive queue. Needed for the destroy;
     * arriving before a close (the QP failed on its own) it closes the queue.
     */
    void onLastWqeReached() {
        lastWqeReached = true;
        if (!closing) {
            close("last WQE reached (the QP is in the error state)");
        }
        destroyIfDrained();
    }

    /** A fatal asynchronous event of the QP (QP fatal, request or access error): the queue pair is unusable. */
    void onQpError(String event) {
        close(event);
    }

    // ---------------------------------------------------------------- the state machine

    /** Runs {@code req} through the states until it has to wait for an event. */
    void process(RdmaRequest req) {
        req.inProcess = true;
        try {
            State prev;
            do {
                prev = req.state;
                switch (prev) {
                    case NEW -> onNew(req);
                    case NEED_BUFFER -> onNeedBuffer(req);
                    case TRANSFER_PENDING_HOST_TO_CONTROLLER -> onTransferPending(req);
                    case READY_TO_EXECUTE -> onReadyToExecute(req);
                    case EXECUTED -> onExecuted(req);
                    case COMPLETED -> onCompleted(req);
                    default -> {
                        // FREE, TRANSFERRING_HOST_TO_CONTROLLER, EXECUTING, COMPLETING: an event moves it on
                    }
                }
            } while (req.state != prev);
        } finally {
            req.inProcess = false;
        }
    }

    private void onNew(RdmaRequest req) {
        if (closing) {
            req.state = State.COMPLETED;
            return;
        }
        int status = dispatcher.parse(req);
        if (status == NvmeStatus.SUCCESS && req.xferDir != Request.XFER_NONE) {
            status = req.sgl.parse(wire.recvBuffer(), wire.recvOffset(req.recvIndex), req.capsuleDataLength,
                limits.inCapsuleDataSize(), req.xferDir, req.expectedLength, limits.mdtsBytes());
            if (status != NvmeStatus.SUCCESS) {
                req.errorLocation = req.sgl.errorLocation;
            }
        } else {
            req.sgl.clear();
        }
        if (status != NvmeStatus.SUCCESS) {
            releaseRecv(req);
            req.complete(status); // -> EXECUTED
            return;
        }
        if (req.xferDir == Request.XFER_NONE) {
            releaseRecv(req);
            req.state = State.READY_TO_EXECUTE;
        } else {
            req.dataLength = req.sgl.totalLength;
            req.state = State.NEED_BUFFER;
        }
    }

    private void onNeedBuffer(RdmaRequest req) {
        if (closing) {
            buffers.forget(req);
            req.state = State.COMPLETED;
            return;
        }
        if (req.sgl.inCapsule && req.sgl.inCapsuleOffset == 0) {
            // the data is used where it was received: the receive buffer stays taken (not reposted to the
            // SRQ) until the request completes (onCompleted), as SPDK's RDMA transport does
            req.data = wire.capsuleData(req.recvIndex);
            req.state = State.READY_TO_EXECUTE;
            return;
        }
        int b = buffers.acquire(req);
        if (b < 0) {
            return; // queued; the poll group runs it again when a buffer is released
        }
        req.bufferIndex = b;
        req.data = buffers.buffer(b);
        if (req.sgl.inCapsule) {
            ByteBuf capsule = wire.recvBuffer();
            req.data.setBytes(0, capsule, wire.recvOffset(req.recvIndex) + 64 + req.sgl.inCapsuleOffset,
                req.sgl.totalLength);
            releaseRecv(req);
            req.state = State.READY_TO_EXECUTE;
        } else {
            releaseRecv(req);
            req.state = req.xferDir == Request.XFER_H2C && req.dataLength > 0
                ? State.TRANSFER_PENDING_HOST_TO_CONTROLLER : State.READY_TO_EXECUTE;
        }
    }

    private void onTransferPending(RdmaRequest req) {
        if (closing) {
            forgetReadWaiter(req);
            req.state = State.COMPLETED;
            return;
        }
        int n = req.sgl.count;
        boolean first = readWaiters.isEmpty() || readWaiters.peekFirst() == req;
        if (!first || (readsOutstanding > 0 && readsOutstanding + n > readDepth)) {
            if (!req.waitingForRead) {
                req.waitingForRead = true;
                readWaiters.addLast(req);
            }
            return;
        }
        forgetReadWaiter(req);
        int rc = wire.postReads(req);
        if (rc < 0) {
            req.state = State.COMPLETED;
            close("posting RDMA READ failed: errno " + -rc);
            return;
        }
        req.readsOutstanding = n;
        readsOutstanding += n;
        req.state = State.TRANSFERRING_HOST_TO_CONTROLLER;
    }

    private void forgetReadWaiter(RdmaRequest req) {
        if (req.waitingForRead) {
            readWaiters.remove(req);
            req.waitingForRead = false;
        }
    }

    private void runReadWaiters() {
        RdmaRequest next;
        while ((next = readWaiters.peekFirst()) != null
            && (readsOutstanding == 0 || readsOutstanding + next.sgl.count <= readDepth)) {
            process(next);
            if (next.state == State.TRANSFER_PENDING_HOST_TO_CONTROLLER) {
                return;
            }
            if (readWaiters.peekFirst() == next) {
                // not taken off by its own run (it no longer waits for reads): never spin on it
                readWaiters.pollFirst();
                next.waitingForRead = false;
            }
        }
    }

    private void onReadyToExecute(RdmaRequest req) {
        if (closing) {
            req.state = State.COMPLETED;
            return;
        }
        req.state = State.EXECUTING;
        dispatcher.execute(req); // a synchronous complete() sets EXECUTED
    }

    private void onExecuted(RdmaRequest req) {
        observe(req);
        if (closing) {
            req.state = State.COMPLETED;
            return;
        }
        int at = responseOffset(req);
        Cqe.write(responses, at, req.dw0, req.dw1, sqhd, controller != null ? qid : cmQid, req.cid(), req.status);
        boolean c2h = NvmeStatus.isSuccess(req.status) && req.xferDir == Request.XFER_C2H && req.dataLength > 0;
        int writes = c2h ? writeCount(req) : 0;
        int rc = wire.postResponse(req, writes);
        if (rc < 0) {
            req.state = State.COMPLETED;
            close("posting the response failed: errno " + -rc);
            return;
        }
        req.state = State.COMPLETING;
    }

    /** WRITEs that cover the handler's data ({@code dataLength} may be shorter than the SGL). */
    static int writeCount(RdmaRequest req) {
        int left = req.dataLength;
        int n = 0;
        while (left > 0 && n < req.sgl.count) {
            left -= req.sgl.length[n++];
        }
        return n;
    }

    private void onCompleted(RdmaRequest req) {
        releaseRecv(req);
        boolean released = req.bufferIndex >= 0;
        if (released) {
            buffers.release(req.bufferIndex);
            req.bufferIndex = -1;
        }
        req.data = null; // a pool slice or a receive buffer's data slice: never released
        req.releaseBuffers();
        req.state = State.FREE;
        freeSlot(req.index);
        if (closing) {
            destroyIfDrained();
        }
        if (released) {
            buffers.runWaiters();
        }
    }

    private void releaseRecv(RdmaRequest req) {
        if (req.recvIndex >= 0) {
            wire.repostRecv(req.recvIndex);
            req.recvIndex = -1;
        }
    }

    // ---------------------------------------------------------------- completion from the core

    @Override
    public void complete(Request r) {
        RdmaRequest req = (RdmaRequest) r;
        req.state = State.EXECUTED;
        if (!req.inProcess) {
            process(req);
        }
    }

    // ---------------------------------------------------------------- teardown

    /** Starts closing (idempotent): error state, forced completion of what is not in flight, controller teardown. */
    void close(String reason) {
        if (closing) {
            return;
        }
        closing = true;
        LOG.debug("rdma queue {} from {}: closing: {}", qid, peer, reason);
        if (wire != null) {
            wire.shutdown();
        }
        while (parkedCount > 0) {
            wire.repostRecv(parkedRecv[parkedHead]);
            parkedHead = (parkedHead + 1) % parkedRecv.length;
            parkedCount--;
        }
        for (RdmaRequest req : table) {
            buffers.forget(req);
            forgetReadWaiter(req);
            switch (req.state) {
                case FREE, EXECUTING, TRANSFERRING_HOST_TO_CONTROLLER, COMPLETING -> {
                    // free, or still owned by the block device, or with work requests posted (READs, or
                    // WRITEs + SEND) that the adapter may still be carrying out: each comes back with the
                    // completion (flushed, or done) of its last work request, never before
                }
                default -> {
                    req.state = State.COMPLETED;
                    process(req);
                }
            }
        }
        Controller c = controller;
        if (c != null) {
            if (qid == 0) {
                c.destroy("admin queue disconnected");
            } else {
                c.detachIoQueue(qid, this);
            }
        }
        destroyIfDrained();
    }

    private void destroyIfDrained() {
        if (destroyed || !closing || freeSlots() != table.length || !lastWqeReached) {
            return;
        }
        destroyed = true;
        if (wire != null) {
            wire.destroy();
        }
    }

    /** Requests not FREE (for tests and logs). */
    int outstanding() {
        return table.length - freeSlots();
    }

    @Override
    public String toString() {
        return "rdma queue " + qid + " from " + peer;
    }
}
