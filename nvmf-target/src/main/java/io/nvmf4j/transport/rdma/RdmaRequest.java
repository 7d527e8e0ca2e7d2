package io.nvmf4j.transport.rdma;

import io.nvmf4j.core.Queue;
import io.nvmf4j.core.Request;

/**
 * A request on an NVMe/RDMA queue pair: the core request plus its place in the state machine that
 * {@link RdmaQueue#process} drives (after SPDK {@code lib/nvmf/rdma.c}).
 */
final class RdmaRequest extends Request {
    /** Request states; the arrows name the event that moves a request on. */
    enum State {
        /** In the queue's free list. */
        FREE,
        /** A capsule arrived: SQE copied, its receive buffer still held; next: parse. */
        NEW,
        /** Parsed; waits in the poll group's buffer queue for a data buffer. */
        NEED_BUFFER,
        /** Has its buffer; the host's data must be RDMA READ; waits in the queue pair's read-credit queue. */
        TRANSFER_PENDING_HOST_TO_CONTROLLER,
        /** RDMA READs posted; waits for their completion. */
        TRANSFERRING_HOST_TO_CONTROLLER,
        /** Data in place (or none): the handler may run. */
        READY_TO_EXECUTE,
        /** The handler runs (block device, admin logic); ends in {@link RdmaQueue#complete}. */
        EXECUTING,
        /** Status known (handler done or parse failed): post the RDMA WRITEs and the response SEND. */
        EXECUTED,
        /** WRITEs + response SEND posted; waits for the SEND completion. */
        COMPLETING,
        /** Response sent, or the queue pair is gone: release the buffers and go back to FREE. */
        COMPLETED,
    }

    /** Index in the queue's request table; also in the wr_id of its work requests. */
    final int index;
    State state = State.FREE;
    /** Receive buffer (SRQ index) still held by this request, or -1. */
    int recvIndex = -1;
    /** Bytes of capsule data that followed the SQE. */
    int capsuleDataLength;
    /** Data buffer (poll-group pool index), or -1. */
    int bufferIndex = -1;
    /** RDMA READs posted and not yet complete. */
    int readsOutstanding;
    /** Set while {@link RdmaQueue#process} runs for this request (a synchronous complete returns into it). */
    boolean inProcess;
    /** Waiting in the poll group's buffer queue ({@link DataBuffers}). */
    boolean waitingForBuffer;
    /**
     * Waiting in the queue pair's read-credit queue. A flag of its own: with one flag for both queues,
     * forgetting a request in the buffer queue cleared the mark of one in the read queue, which then
     * stayed there after it was freed (see {@link RdmaQueue#close}).
     */
    boolean waitingForRead;
    final RdmaSgl sgl = new RdmaSgl();

    RdmaRequest(Queue queue, int index) {
        super(queue);
        this.index = index;
    }
}
