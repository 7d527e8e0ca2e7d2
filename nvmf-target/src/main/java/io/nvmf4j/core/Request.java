package io.nvmf4j.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.nvmf4j.bdev.BdevIo;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Sqe;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One command from capsule to response. Requests are preallocated per queue (sized to the queue
 * depth) and reused; a transport subclass adds its own state. Owned by the queue's poll group thread.
 *
 * <p>Flow: the transport copies the SQE in, {@code CommandDispatcher.parse} picks the {@link #handler}
 * and the data direction and length, the transport moves data, the handler runs and ends in exactly
 * one {@link #complete(int)}.
 */
public abstract class Request implements BdevIo, io.nvmf4j.engine.IoCommand {
    /** No data transfer. */
    public static final int XFER_NONE = 0;
    /** Host to controller (write-like: in-capsule, R2T/H2CData, RDMA READ). */
    public static final int XFER_H2C = 1;
    /** Controller to host (read-like: C2HData, RDMA WRITE). */
    public static final int XFER_C2H = 2;

    /** Invalid Parameter Offset / error location when none applies. */
    public static final int NO_ERROR_LOCATION = 0xFFFF;
    /** Delay of {@link #yieldStep}: just enough to run after the next poll of the connections. */
    private static final long YIELD_DELAY_NANOS = 1_000;

    private final ByteBuf sqeBuffer = Unpooled.wrappedBuffer(new byte[Sqe.SIZE]);
    public final Sqe sqe = new Sqe().wrap(sqeBuffer, 0);
    protected final Queue queue;
    private final Runnable asyncCompletion = this::deliverAsyncCompletion;
    private final Runnable resumeStep = this::resumeStep;
    private int asyncStatus;

    // Set by parse
    public CommandHandler handler;
    public int xferDir;
    /** Exact transfer length the command needs, or -1 when the handler checks it. */
    public int expectedLength;
    public Namespace ns;
    /** {@link #ns} counts this command in flight ({@link #countIn}; given back at completion or before a fence). */
    private boolean nsHeld;
    /** The epoch half of {@link #ns} this command is counted in while {@link #nsHeld} (see Namespace#fence). */
    private int nsHalf;
    /**
     * The controller that counts this command on its devices ({@link #countIn}), or null. Given back in one place,
     * {@link #complete}, which every command reaches exactly once; kept through a reservation change and a fence,
     * so the Command Quiesce Time wait (DeviceQuiesce) sees the command until its answer.
     */
    private Controller counted;
    /** The QoS of {@link #ns} this command took its budget from (null: none yet); see ThrottledRequests. */
    public io.nvmf4j.qos.NamespaceQos qosTaken;
    /** When QoS lets this command start, and when it began to wait ({@link System#nanoTime}). */
    long qosStart;
    long qosParkedAt;
    /** Next step after a block-device completion; null completes the request with the device status. */
    public BdevStep bdevStep;

    // Data
    public ByteBuf data;
    public int dataLength;
    public ByteBuf aux;
    /** Buffer the block device reads into or writes from (usually {@link #data}). */
    public ByteBuf bdevBuffer;
    public long bdevOffset;
    public int bdevLength;
    /** Force Unit Access for the block-device write (set by the command layer from CDW12 bit 30). */
    public boolean bdevFua;

    // Completion
    public int status;
    public int dw0;
    public int dw1;
    public int errorLocation;
    public long errorLba;
    public long startNanos;
    /** Scratch state of multi-step handlers (DSM: range index and next LBA inside it). */
    public int step;
    public long cursor;
    /** Largest piece a multi-step handler hands to the device at once. */
    public long pieceBytes;
    /** Set while a multi-step handler submits, so a synchronous completion returns instead of recursing. */
    public boolean submitting;
    public boolean completedInline;
    public int inlineStatus;

    protected Request(Queue queue) {
        this.queue = queue;
    }

    public Queue queue() {
        return queue;
    }

    @Override
    public Controller controller() {
        return queue.controller();
    }

    @Override
    public Namespace namespace() {
        return ns;
    }

    @Override
    public int qid() {
        return queue.qid();
    }

    @Override
    public int opcode() {
        return sqe.opcode();
    }

    @Override
    public int nsid() {
        return sqe.nsid();
    }

    @Override
    public long slba() {
        return sqe.slba();
    }

    @Override
    public int nlb() {
        return sqe.nlb();
    }

    @Override
    public int status() {
        return status;
    }

    /** Copies the 64-byte SQE from {@code src} at {@code index} and clears per-command state. */
    public void reset(ByteBuf src, int index) {
        sqeBuffer.setBytes(0, src, index, Sqe.SIZE);
        handler = null;
        xferDir = XFER_NONE;
        expectedLength = 0;
        assert counted == null && !nsHeld : "a request reused before its completion gave back its counts";
        ns = null;
        qosTaken = null;
        bdevStep = null;
        bdevBuffer = null;
        bdevOffset = 0;
        bdevLength = 0;
        bdevFua = false;
        step = 0;
        cursor = 0;
        pieceBytes = 0;
        dataLength = 0;
        status = NvmeStatus.SUCCESS;
        dw0 = 0;
        dw1 = 0;
        errorLocation = NO_ERROR_LOCATION;
        errorLba = 0;
    }

    public int cid() {
        return sqe.cid();
    }

    /**
     * Counts this command in before it touches {@link #ns}'s device: on the namespace (its removal and fences wait
     * for it) and on the queue's controller (its teardown and reset wait for it, up to the Command Quiesce Time).
     * Returns SUCCESS with both taken, or the status to fail with and nothing taken: Invalid Namespace (removed),
     * or Command Aborted due to SQ Deletion (the controller is being torn down or reset). {@link #complete} gives
     * both back.
     */
    public int countIn() {
        int half = ns.tryAcquire();
        if (half < 0) {
            return NvmeStatus.INVALID_NAMESPACE;
        }
        Controller c = queue.controller();
        if (!c.deviceCommandStarting()) {
            ns.release(half);
            return NvmeStatus.ABORTED_SQ_DELETION;
        }
        nsHalf = half;
        nsHeld = true;
        counted = c;
        return NvmeStatus.SUCCESS;
    }

    /**
     * Moves the count this command holds on {@link #ns} (if any) to a hold that the namespace's removal waits for
     * but its fences do not (Namespace#holdForChange): a reservation change, which does not touch the device. The
     * controller's count stays until {@link #complete}.
     */
    public void holdNamespaceForChange() {
        ns.holdForChange(nsHeld ? nsHalf : -1);
        nsHeld = false;
    }

    /**
     * Gives back both counts {@link #countIn} took: at completion, and before a command waits to run again from the
     * start (a write held during a snapshot, which counts in again when it resumes).
     */
    public void uncount() {
        releaseNamespace();
        if (counted != null) {
            counted.deviceCommandEnded();
            counted = null;
        }
    }

    /** Ends the command: exactly once. Hands the request back to its transport for the response. */
    public void complete(int status) {
        this.status = status;
        uncount();
        if (queue.connectInProgress() == this) {
            queue.connectInProgress(null);
        }
        if (status != NvmeStatus.SUCCESS) {
            Controller c = queue.controller();
            if (c != null) {
                c.recordError(queue.qid(), sqe.cid(), status, errorLocation, errorLba, sqe.nsid());
            }
        }
        queue.complete(this);
    }

    /**
     * Gives back the count this command holds on {@link #ns}, if any (at completion, or before waiting on a fence);
     * the controller's count stays until {@link #complete}.
     */
    public void releaseNamespace() {
        if (nsHeld) {
            nsHeld = false;
            ns.release(nsHalf);
        }
    }

    /** Completes with an error and records which SQE/data field was wrong (Error log, Connect IPO). */
    public void fail(int status, int errorLocation) {
        this.errorLocation = errorLocation;
        complete(status);
    }

    /** Releases data buffers; called by the transport when the response is on its way. */
    public void releaseBuffers() {
        if (data != null) {
            data.release();
            data = null;
        }
        if (aux != null) {
            aux.release();
            aux = null;
        }
    }

    // BdevIo

    @Override
    public long offset() {
        return bdevOffset;
    }

    @Override
    public int length() {
        return bdevLength;
    }

    @Override
    public ByteBuf buffer() {
        return bdevBuffer;
    }

    @Override
    public boolean fua() {
        return bdevFua;
    }

    @Override
    public void bdevComplete(int status) {
        BdevStep step = bdevStep;
        if (step == null) {
            complete(status);
        } else {
            step.done(this, status);
        }
    }

    @Override
    public void bdevCompleteAsync(int status) {
        asyncStatus = status;
        queue.executor().execute(asyncCompletion);
    }

    private void deliverAsyncCompletion() {
        bdevComplete(asyncStatus);
    }

    /**
     * Ends one bounded step of a long command: {@link #bdevStep} runs again (with SUCCESS) as a task of the
     * queue's poll group, after the poll group has polled its connections, so its other queues are served in
     * between. Scheduled (1 us) rather than executed: a Netty event loop runs the tasks added while it runs
     * tasks in the same round, so a plain re-execute would starve the connections (measured: a read on
     * another queue waited 0.9 s of a 1.1 s DSM). A poll group that is shutting down refuses the task; the
     * command then ends as aborted. Allocates one scheduled task per step (long commands only).
     */
    public void yieldStep() {
        try {
            queue.executor().schedule(resumeStep, YIELD_DELAY_NANOS, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            complete(NvmeStatus.ABORTED_SQ_DELETION);
        }
    }

    private void resumeStep() {
        bdevStep.done(this, NvmeStatus.SUCCESS);
    }

    /** Continuation after a block-device operation. */
    @FunctionalInterface
    public interface BdevStep {
        void done(Request req, int status);
    }
}
