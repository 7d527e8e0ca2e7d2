package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.core.Queue;
import io.nvmf4j.core.Request;

/**
 * A request on an NVMe/TCP queue: the core request plus its place in the state machine that {@link TcpQueue#process}
 * drives (after SPDK {@code lib/nvmf/tcp.c}), its transfer tag and its R2T progress.
 */
final class TcpRequest extends Request {
    /** Request states; each names what moves the request on. */
    enum State {
        /** In the queue's free list. */
        FREE,
        /** A capsule arrived: SQE copied, its in-capsule data still in the receive buffer ({@link #capsule}). */
        NEW,
        /** Parsed, its SGL checked: takes its data buffer (in-capsule data, a read's response frame, a pooled one). */
        NEED_BUFFER,
        /** R2T sent for the whole transfer: H2CData PDUs fill the buffer; the last one moves it on. */
        TRANSFERRING_HOST_TO_CONTROLLER,
        /** Data in place (or none): the handler may run. */
        READY_TO_EXECUTE,
        /** The handler runs (block device, admin logic); ends in {@link TcpQueue#complete}. */
        EXECUTING,
        /** Status known (handler done, or parse or transfer failed): queue the response PDUs. */
        EXECUTED,
        /**
         * Response (C2HData and/or CapsuleResp) queued on the connection; the request and its buffers stay taken until
         * the last byte of it has been written to the socket ({@link #wireEnd}, {@link TcpQueue#reapWritten}).
         */
        TRANSFERRING_CONTROLLER_TO_HOST,
        /** Response written, or the connection gone: release the buffers and go back to FREE. */
        COMPLETED,
    }

    /** Transfer tag: the index in the queue's request table. */
    final int ttag;
    State state = State.FREE;
    /** Set while {@link TcpQueue#process} runs for this request: a response taken meanwhile is freed by that run. */
    boolean inProcess;
    /**
     * In NEW and NEED_BUFFER: the receive buffer the capsule is in (not retained: both states are left before the
     * capsule's event returns), and where its in-capsule data starts and how long it is.
     */
    ByteBuf capsule;
    int capsuleDataIndex;
    int capsuleDataLength;
    /** SGL 1 is a data block in the capsule (else a transport data block: an R2T or a response frame). */
    boolean inCapsule;
    /** Bytes of H2C data received for the R2T, by whole H2CData PDUs. */
    int h2cReceived;
    /** Counted in the queue's writes of at least {@link TcpQueue#HEADER_READ_MIN_DATA} whose data is still to come. */
    boolean largeH2c;
    /** A data digest failed during this command's transfer: complete with Transient Transport Error. */
    boolean digestFailed;
    /**
     * Completed in a read batch, its latency not yet recorded: it is, with one clock reading for the batch, when the
     * batch's responses are flushed ({@link TcpQueue#flushBatch}), or when the request is freed before that.
     */
    boolean unobserved;
    /** In TRANSFERRING_CONTROLLER_TO_HOST: the queue's count of bytes handed to the connection with this response. */
    long wireEnd;
    /**
     * A read's whole response buffer, or null: {@link #data} is a slice of it, with room before the data for the
     * C2HData header and after it for the digest and CapsuleResp ({@link TcpPduWriter#c2hFrame}).
     */
    ByteBuf frame;
    /** Where the response starts in {@link #frame}: its data is at this index plus the C2HData's PDO. */
    int frameStart;
    /**
     * This request slot's own response buffer for reads of up to {@link TcpQueue#OWN_FRAME_DATA} bytes, kept from
     * one command to the next (the queue releases it when it closes), or null. The slot holds one reference;
     * the buffer is reused only when that is the only one left (the channel has written and released it).
     */
    ByteBuf ownFrame;

    TcpRequest(Queue queue, int ttag) {
        super(queue);
        this.ttag = ttag;
    }
}
