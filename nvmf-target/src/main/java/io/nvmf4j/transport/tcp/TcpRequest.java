package io.nvmf4j.transport.tcp;

import io.nvmf4j.core.Queue;
import io.nvmf4j.core.Request;

/** A request on an NVMe/TCP queue: the core request plus its transport state and R2T progress. */
final class TcpRequest extends Request {
    /** Request states on a TCP queue. */
    enum State {
        /** In the free list. */
        FREE,
        /** Parsed; waiting for H2CData after an R2T. */
        AWAITING_H2C_DATA,
        /** Handler running (block device or admin logic). */
        EXECUTING,
        /**
         * Response (C2HData and/or CapsuleResp) queued on the channel; the request and its buffers stay
         * taken until the last byte of it has been written to the socket ({@link #wireEnd}).
         */
        RESPONDING,
    }

    /** Transfer tag: the index in the queue's request table. */
    final int ttag;
    State state = State.FREE;
    /** Bytes of H2C data received so far for the current R2T. */
    int h2cReceived;
    /** A data digest failed during this command's transfer: complete with Transient Transport Error. */
    boolean digestFailed;
    /**
     * Completed in a read batch, its latency not yet recorded: it is, with one clock reading for the batch, when the
     * batch's responses are flushed ({@link TcpQueue#flushBatch}), or when the request is freed before that.
     */
    boolean unobserved;
    /** In RESPONDING: the queue's count of bytes handed to the channel once this response was queued. */
    long wireEnd;
    /**
     * A read's whole response buffer, or null: {@link #data} is a slice of it, with room before the data for the
     * C2HData header and after it for the digest and CapsuleResp ({@link TcpPduWriter#c2hFrame}).
     */
    io.netty.buffer.ByteBuf frame;
    /** Where the response starts in {@link #frame}: its data is at this index plus the C2HData's PDO. */
    int frameStart;
    /**
     * This request slot's own response buffer for reads of up to {@link TcpQueue#OWN_FRAME_DATA} bytes, kept from
     * one command to the next (the queue's release it when it closes), or null. The slot holds one reference;
     * the buffer is reused only when that is the only one left (the channel has written and released it).
     */
    io.netty.buffer.ByteBuf ownFrame;

    TcpRequest(Queue queue, int ttag) {
        super(queue);
        this.ttag = ttag;
    }
}
