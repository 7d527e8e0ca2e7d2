package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.QueueBase;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Sgl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ScheduledExecutorService;

import static io.nvmf4j.transport.tcp.TcpPdu.*;

/**
 * One NVMe/TCP connection = one queue pair, owned by one poll group (its Netty event loop) for life: the
 * requests and their state machine ({@link TcpRequest.State}). The PDUs come from its {@link TcpPduReader}
 * (the connection's Netty handler, which frames and checks them) and go out through its
 * {@link TcpPduWriter}; {@link #handler} makes the three for a new connection.
 *
 * <p>Request states: a capsule takes a FREE request from a table sized to the queue depth (the transfer tag,
 * TTAG, is the table index); a write whose data is not in the capsule is AWAITING_H2C_DATA after its R2T
 * until the last H2CData arrived; then EXECUTING in the command layer; at completion its response PDUs
 * are queued and it is RESPONDING until the socket has taken them ({@link #reapWritten()}), then FREE.
 * A protocol violation ends the connection with a C2HTermReq; a data digest error fails only its command
 * (Transient Transport Error).
 *
 * <p>Backpressure: a request (and its data buffer) stays taken until the last byte of its response has
 * been written to the socket (behind TLS: taken by the TLS handler, which copies it into its records), not
 * merely queued on the channel. A host that sends more commands than its queue holds while its responses
 * are still unwritten is terminated (PDU Sequence Error). While the channel is not writable (its outbound
 * bytes above the high water mark set in {@link TcpTransport}) the reader decodes no further PDU and stops
 * reading the socket; it resumes when the channel drains below the low mark.
 *
 * <p>Timeouts: a connection that has not completed ICReq and Connect within
 * {@link TcpTransportConfig#connectTimeoutMs} is closed (logged once, counted through
 * {@link IoObserver#connectTimedOut}); a terminated or disconnected connection is closed once its last
 * PDUs (C2HTermReq, responses) are written or after {@link TcpPduReader#TERMINATE_LINGER_MS}, whichever
 * comes first (a host that does not read would never take them).
 */
final class TcpQueue extends QueueBase implements TcpPduWriter.StagedListener {
    private static final Logger LOG = LoggerFactory.getLogger(TcpQueue.class);
    /** Requests available before Connect tells the queue size. */
    private static final int INITIAL_REQUESTS = 4;
    /**
     * Reads of up to this many bytes are answered from their request slot's own buffer ({@link TcpRequest#ownFrame}),
     * reused from one command to the next: no pool allocation and release per read, and a buffer the CPU cache
     * still holds (the free slots are a stack, so the few slots a queue depth uses keep being reused; the pool's
     * thread cache hands its buffers out first in, first out). A queue keeps at most one such buffer per slot that
     * served a read (about 5 KiB for 4 KiB reads, 133 KiB for 128 KiB ones) until it closes: what the slots in use
     * at the deepest moment held anyway, kept. The bound is 128 KiB, the default MDTS, so that reads of every length
     * a host sends by default copy into a warm buffer; a pool buffer per large read makes the copy out of the
     * namespace land in memory the cache no longer holds (docs/benchmarks-history.md, "Copies of 4–16 KiB with libc's
     * memcpy", has the figures).
     */
    static final int OWN_FRAME_DATA = 131072;
    /** Socket reads that went straight into a request's buffer, all queues together (tests look at it). */
    static final java.util.concurrent.atomic.AtomicLong IN_PLACE_READS = new java.util.concurrent.atomic.AtomicLong();
    /** Socket reads of an H2CData header alone ({@link TcpPduReader#headerReadSize()}), all queues together (tests). */
    static final java.util.concurrent.atomic.AtomicLong HEADER_READS = new java.util.concurrent.atomic.AtomicLong();
    /** Socket reads appended to the cut-off start of a PDU ({@link TcpPduReader#carryTarget}), all queues together (tests). */
    static final java.util.concurrent.atomic.AtomicLong CARRIED_READS = new java.util.concurrent.atomic.AtomicLong();
    /** The transport name the observer gets (the registry's, never a second spelling). */
    static final String TRANSPORT = TcpTransport.TYPE.name();

    private final CommandDispatcher dispatcher;
    private final TcpTransportConfig config;

    private ChannelHandlerContext ctx;
    private TcpPduReader reader;
    private TcpPduWriter writer;
    private boolean sqFlowDisabled;
    /** The TLS PSK identity of the secure channel in front of this queue, null without TLS. */
    private TlsPsk.Identity tlsIdentity;

    private TcpRequest[] table = new TcpRequest[0];
    /** Ring of the ttags of RESPONDING requests, in the order their responses were queued (= sent). */
    private int[] responding = new int[0];
    private int respondingHead;
    private int respondingCount;
    /** The last this many RESPONDING requests end in the writer's staged bytes, not yet handed to the channel. */
    private int stagedResponses;
    /** The connection closed: request slots release their own buffers as they are freed. */
    private boolean closedDown;
    /**
     * Requests AWAITING_H2C_DATA of at least {@link TcpPduReader#HEADER_READ_MIN_DATA} bytes: while there are any,
     * the reader has the socket read an H2CData header alone ({@link TcpPduReader#headerReadSize()}).
     */
    private int awaitingLargeH2c;
    /**
     * The ttags of requests completed in the current read batch whose latency is recorded at its flush
     * ({@link TcpRequest#unobserved}; an entry whose request was freed and recorded meanwhile is skipped).
     */
    private int[] unobserved = new int[0];
    private int unobservedCount;

    private TcpQueue(CommandDispatcher dispatcher, TcpTransportConfig config, TransportLimits limits,
                     ListenerConfig listener, IoObserver observer) {
        super(TRANSPORT, listener, limits, observer);
        this.dispatcher = dispatcher;
        this.config = config;
        growTable(INITIAL_REQUESTS);
    }

    /** The Netty handler of a new connection: its reader, which makes the queue's writer when it is added. */
    static TcpPduReader handler(CommandDispatcher dispatcher, TcpTransportConfig config, TransportLimits limits,
                                ListenerConfig listener, IoObserver observer) {
        return new TcpPduReader(new TcpQueue(dispatcher, config, limits, listener, observer), config, observer);
    }

    /** Called by the reader when it is added to the channel. */
    void attach(ChannelHandlerContext ctx, TcpPduReader reader, TcpPduWriter writer) {
        this.ctx = ctx;
        this.reader = reader;
        this.writer = writer;
    }

    // ---------------------------------------------------------------- Queue

    @Override
    public void bind(Controller controller, int qid, int sqsize, boolean sqFlowControlDisabled) {
        super.bind(controller, qid, sqsize, sqFlowControlDisabled);
        this.sqFlowDisabled = sqFlowControlDisabled;
        reader.cancelConnectTimer();
        // SQSIZE + 1 outstanding commands at most; the admin queue also holds the AERs the controller keeps
        growTable(sqsize + 1 + (qid == 0 ? Controller.AERL + 1 : 0));
    }

    @Override
    public ScheduledExecutorService executor() {
        return ctx.executor();
    }

    @Override
    public String peer() {
        return reader.peer();
    }

    @Override
    public TlsPsk.Identity secureChannelIdentity() {
        return tlsIdentity;
    }

    /** The TLS handshake in front of this queue ended with {@code identity}'s PSK (set before any PDU arrives). */
    void secured(TlsPsk.Identity identity) {
        tlsIdentity = identity;
    }

    @Override
    public boolean isClosed() {
        return closedDown;
    }

    @Override
    public void disconnect(String reason) {
        if (ctx != null && !ctx.executor().inEventLoop()) {
            // the writer is the poll group's alone (Controller.destroy runs on the caller's thread)
            try {
                ctx.executor().execute(() -> disconnect(reason));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                LOG.debug("queue {} from {}: poll group stopped; its shutdown closes the connection", qid, peer());
            }
            return;
        }
        if (ctx != null && ctx.channel().isOpen()) {
            LOG.debug("queue {} from {}: closing: {}", qid, peer(), reason);
            // flush what is queued (e.g. the response to a Disconnect command) before closing
            writer.writeStaged();
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> ctx.close());
            reader.lingerThenClose();
        }
    }

    /** The largest in-capsule data a command capsule may carry on this queue. */
    int inCapsuleDataLimit() {
        return qid == 0 ? ADMIN_IN_CAPSULE : limits.inCapsuleDataSize();
    }

    // ---------------------------------------------------------------- request table

    private void growTable(int size) {
        if (size <= table.length) {
            return;
        }
        int from = table.length;
        TcpRequest[] t = java.util.Arrays.copyOf(table, size);
        for (int i = from; i < size; i++) {
            t[i] = new TcpRequest(this, i);
        }
        growFreeSlots(from, size);
        int[] ring = new int[size];
        for (int i = 0; i < respondingCount; i++) {
            ring[i] = responding[(respondingHead + i) % responding.length];
        }
        table = t;
        responding = ring;
        respondingHead = 0;
        unobserved = java.util.Arrays.copyOf(unobserved, size);
    }

    private TcpRequest allocate() {
        int i = takeFreeSlot();
        return i < 0 ? null : table[i];
    }

    private void recycle(TcpRequest req) {
        if (req.unobserved) {
            req.unobserved = false;
            observe(req); // freed before its batch's flush (the connection closed): recorded now, never lost
        }
        req.releaseBuffers();
        if (req.frame != null) {
            if (req.frame != req.ownFrame) {
                req.frame.release();
            }
            req.frame = null;
        }
        if (closedDown && req.ownFrame != null) {
            req.ownFrame.release();
            req.ownFrame = null;
        }
        if (req.state != TcpRequest.State.FREE) {
            leaving(req);
            req.state = TcpRequest.State.FREE;
            freeSlot(req.ttag);
        }
    }

    /** {@code req} is about to leave its state: counted out of {@link #awaitingLargeH2c} if it was in it. */
    private void leaving(TcpRequest req) {
        if (req.state == TcpRequest.State.AWAITING_H2C_DATA && req.dataLength >= TcpPduReader.HEADER_READ_MIN_DATA) {
            awaitingLargeH2c--;
        }
    }

    /** Writes of at least {@link TcpPduReader#HEADER_READ_MIN_DATA} bytes whose data the host is still to send. */
    int awaitingLargeH2c() {
        return awaitingLargeH2c;
    }

    /** The whole response of {@code req} is queued: it stays RESPONDING until those bytes are written. */
    private void responded(TcpRequest req) {
        leaving(req);
        req.state = TcpRequest.State.RESPONDING;
        if (writer.staging()) {
            // its last bytes are staged: counted once they are handed to the channel (stagedQueued)
            req.wireEnd = Long.MAX_VALUE;
            stagedResponses++;
        } else {
            req.wireEnd = writer.queuedBytes();
        }
        responding[(respondingHead + respondingCount++) % responding.length] = req.ttag;
    }

    /** The responses that ended in the staged bytes are now counted: their last byte is where the count stands. */
    @Override
    public void stagedQueued(long queuedBytes) {
        for (int i = respondingCount - stagedResponses; i < respondingCount; i++) {
            table[responding[(respondingHead + i) % responding.length]].wireEnd = queuedBytes;
        }
        stagedResponses = 0;
    }

    /**
     * Frees the RESPONDING requests whose responses the socket has taken.
     *
     * <p>How we learn that a response was written, without allocating per I/O: Netty's promises are
     * single-use (a completed promise cannot be reset, so a per-request preallocated one cannot serve
     * twice) and a listener needs a fresh promise per write. Instead we count: the writer adds to
     * {@link TcpPduWriter#queuedBytes()} exactly what each write added to the outbound buffer's
     * {@link ChannelOutboundBuffer#totalPendingWriteBytes()} (measured before and after, so Netty's
     * per-entry overhead is included whatever it is configured to), and the outbound buffer subtracts an
     * entry's size only when the entry is fully written (or failed at close). So {@code queuedBytes -
     * totalPendingWriteBytes()} is the number of bytes of our stream the socket has taken, and a response
     * that ended at {@link TcpRequest#wireEnd} or before is on the wire. The outbound buffer is FIFO, so
     * the RESPONDING requests are freed in queue order from {@link #responding}. Counting only errs late
     * (a byte queued outside the writer, such as the Disconnect flush, delays the count), never early.
     * It is read after every flush, before a capsule takes a request, and on writability changes; a host
     * can only have seen a response that was written, so a capsule it sends after one always finds the
     * request freed.
     */
    void reapWritten() {
        if (respondingCount == 0) {
            return;
        }
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        if (out == null) {
            return; // closed: closed() frees them
        }
        // A handler in front of the reader (TLS) copies what it is given before it returns (into its records),
        // so a response handed to it needs nothing of its request any more; what waits is its ciphertext, which
        // the channel's writability bounds. Otherwise: what the socket has taken.
        long written = ctx.pipeline().first() != reader ? Long.MAX_VALUE - 1
            : writer.queuedBytes() - out.totalPendingWriteBytes();
        while (respondingCount > 0) {
            TcpRequest r = table[responding[respondingHead]];
            if (r.wireEnd > written) {
                return;
            }
            respondingHead = (respondingHead + 1) % responding.length;
            respondingCount--;
            recycle(r);
        }
    }

    /**
     * Flushes the responses a read batch queued, records the latencies of its commands with one clock reading
     * (capsule arrival to this flush), then frees the requests the socket took.
     */
    void flushBatch() {
        writer.flushBatch();
        if (unobservedCount > 0) {
            long now = System.nanoTime();
            for (int i = 0; i < unobservedCount; i++) {
                TcpRequest r = table[unobserved[i]];
                if (r.unobserved) {
                    r.unobserved = false;
                    observe(r, now);
                }
            }
            unobservedCount = 0;
        }
        reapWritten();
    }

    /**
     * Records {@code req}'s latency now or, completed inside a read batch, at the batch's flush: one clock reading
     * for all the batch's commands instead of one each (26 ns here; at QD 32 a batch holds a dozen or more).
     */
    private void observeSoon(TcpRequest req) {
        if (writer.batching() && unobservedCount < unobserved.length) {
            req.unobserved = true;
            unobserved[unobservedCount++] = req.ttag;
        } else {
            observe(req);
        }
    }

    void flushUnlessBatching() {
        if (writer.flushUnlessBatching()) {
            reapWritten();
        }
    }

    /** The connection closed (the reader saw it go inactive): requests freed, the controller told. */
    void closed() {
        writer.release();
        stagedResponses = 0;
        closedDown = true;
        for (TcpRequest r : table) {
            if (r.state == TcpRequest.State.AWAITING_H2C_DATA || r.state == TcpRequest.State.RESPONDING) {
                recycle(r);
            } else if (r.state == TcpRequest.State.FREE && r.ownFrame != null) {
                r.ownFrame.release(); // a request still at its device releases its own when it completes
                r.ownFrame = null;
            }
        }
        respondingCount = 0;
        Controller c = controller;
        if (c != null) {
            if (qid == 0) {
                c.destroy("admin queue disconnected");
            } else {
                c.detachIoQueue(qid, this);
            }
        }
    }

    /** {@code 10.0.0.1:45678} or {@code [fe80::1%eth0]:45678}, as the RDMA transport and SPDK write a peer. */
    static String hostPort(java.net.SocketAddress address) {
        if (address instanceof java.net.InetSocketAddress a && a.getAddress() != null) {
            String host = a.getAddress().getHostAddress();
            return (a.getAddress() instanceof java.net.Inet6Address ? "[" + host + "]" : host) + ":" + a.getPort();
        }
        return String.valueOf(address);
    }

    // ---------------------------------------------------------------- commands (from the reader)

    /**
     * A CapsuleCmd PDU at {@code idx} of {@code in}, with {@code dataLen} bytes of in-capsule data at
     * {@code idx + pdo} ({@code digestOk}: its data digest held, or there was none).
     */
    void onCapsuleCmd(ByteBuf in, int idx, int pdo, int dataLen, boolean digestOk) {
        TcpRequest req = allocate();
        if (req == null) {
            reapWritten();
            req = allocate();
        }
        if (req == null) {
            // More commands outstanding (not yet answered on the wire) than the queue holds: the host broke
            // flow control. nvmet and SPDK drop the connection without a C2HTermReq here; a capsule the
            // host may not send yet is a PDU Sequence Error (FEI reserved).
            LOG.info("queue {} from {}: more than {} commands outstanding", qid, peer(), table.length);
            reader.fatal(FES_PDU_SEQUENCE_ERROR, 0, in, idx);
            return;
        }
        req.reset(in, idx + CMD_SQE);
        req.startNanos = reader.readNanos();
        req.state = TcpRequest.State.EXECUTING;
        req.digestFailed = false;
        advanceSqhd();
        if (!digestOk) {
            LOG.info("queue {} from {}: data digest error on command cid {}", qid, peer(), req.cid());
            req.complete(NvmeStatus.TRANSIENT_TRANSPORT_ERROR);
            return;
        }
        try {
            int status = dispatcher.parse(req);
            if (status != NvmeStatus.SUCCESS) {
                req.complete(status);
                return;
            }
            if (req.xferDir != Request.XFER_NONE) {
                status = mapData(req, in, idx + pdo, dataLen);
                if (status != NvmeStatus.SUCCESS) {
                    req.complete(status);
                    return;
                }
            }
            if (req.state == TcpRequest.State.AWAITING_H2C_DATA) {
                writer.r2t(req.cid(), req.ttag, req.dataLength);
                flushUnlessBatching();
            } else {
                dispatcher.execute(req);
            }
        } catch (RuntimeException e) {
            commandFailed(req, e);
        }
    }

    /** A handler threw: complete the command (once) with Internal Error instead of losing it. */
    private void commandFailed(TcpRequest req, RuntimeException e) {
        LOG.warn("queue {} from {}: command opcode 0x{} cid {} failed: {}", qid, peer(),
            Integer.toHexString(req.sqe.opcode()), req.cid(), e.toString(), e);
        if (req.state == TcpRequest.State.EXECUTING || req.state == TcpRequest.State.AWAITING_H2C_DATA) {
            req.complete(NvmeStatus.INTERNAL_ERROR);
        }
    }

    /** Checks SGL 1 against the command and the capsule, and sets up the data buffer. */
    private int mapData(TcpRequest req, ByteBuf in, int dataIndex, int capsuleDataLen) {
        int sglId = req.sqe.sglId();
        int length = req.sqe.sglLength();
        if (sglId == Sgl.DATA_BLOCK_OFFSET) {
            if (req.xferDir != Request.XFER_H2C) {
                req.errorLocation = 24;
                return NvmeStatus.INVALID_FIELD;
            }
            if (length != capsuleDataLen) {
                req.errorLocation = 32;
                return NvmeStatus.DATA_SGL_LENGTH_INVALID;
            }
            if (req.sqe.sglAddress() != 0) {
                req.errorLocation = 24;
                return NvmeStatus.SGL_OFFSET_INVALID;
            }
        } else if (sglId == Sgl.TRANSPORT_DATA_BLOCK) {
            if (capsuleDataLen != 0) {
                req.errorLocation = 32;
                return NvmeStatus.DATA_SGL_LENGTH_INVALID;
            }
        } else {
            req.errorLocation = 39;
            return NvmeStatus.SGL_TYPE_INVALID;
        }
        if (req.expectedLength >= 0 && length != req.expectedLength) {
            req.errorLocation = 32;
            return NvmeStatus.DATA_SGL_LENGTH_INVALID;
        }
        if (Integer.toUnsignedLong(length) > limits.mdtsBytes()) {
            req.errorLocation = 32;
            return NvmeStatus.INVALID_FIELD;
        }
        req.dataLength = length;
        if (sglId == Sgl.DATA_BLOCK_OFFSET && length > 0 && in.hasMemoryAddress()) {
            // in-capsule data used where it was received: a slice of the receive buffer, which Netty neither
            // compacts nor reuses while a slice holds it (it moves on to a new buffer instead)
            req.data = in.retainedSlice(dataIndex, length);
            return NvmeStatus.SUCCESS;
        }
        if (req.xferDir == Request.XFER_C2H && length > 0 && length <= TcpPduWriter.C2H_CHUNK) {
            // a read that one C2HData carries: its data goes where the response will be built around it, at an
            // address a device can read into in place (O_DIRECT); the slack does not change the pool's size class
            // of the usual sizes (4 KiB + headers and 4 KiB + 511 + headers are both 5 KiB)
            int head = writer.frameHead();
            ByteBuf frame = responseFrame(req, head + BlockDevice.BUFFER_ALIGNMENT - 1 + length + writer.frameTail(),
                length);
            int dataAt = alignedIndex(frame, head);
            req.frame = frame;
            req.frameStart = dataAt - head;
            req.data = frame.retainedSlice(dataAt, length);
            return NvmeStatus.SUCCESS;
        }
        req.data = dataBuffer(req, length);
        if (sglId == Sgl.DATA_BLOCK_OFFSET) {
            req.data.setBytes(0, in, dataIndex, length);
        } else if (req.xferDir == Request.XFER_H2C && length > 0) {
            req.state = TcpRequest.State.AWAITING_H2C_DATA;
            req.h2cReceived = 0;
            if (length >= TcpPduReader.HEADER_READ_MIN_DATA) {
                awaitingLargeH2c++;
            }
        }
        return NvmeStatus.SUCCESS;
    }

    /**
     * A read's response buffer of at least {@code size} bytes: the request slot's own ({@link #OWN_FRAME_DATA}),
     * allocated or grown when missing or too small, and otherwise one from the pool, which the request releases
     * when it is freed (a longer read, or the own buffer still held by the channel: never written into then).
     */
    private ByteBuf responseFrame(TcpRequest req, int size, int length) {
        if (length <= OWN_FRAME_DATA) {
            ByteBuf own = req.ownFrame;
            if (own == null || own.refCnt() == 1) {
                if (own == null || own.capacity() < size) {
                    if (own != null) {
                        own.release();
                    }
                    own = ctx.alloc().directBuffer(size);
                    req.ownFrame = own;
                }
                return own;
            }
        }
        return ctx.alloc().directBuffer(size);
    }

    /**
     * The first index at or after {@code from} of {@code b} whose address is a multiple of
     * {@link BlockDevice#BUFFER_ALIGNMENT} ({@code from} itself for a buffer without an address); {@code b} has
     * {@code BUFFER_ALIGNMENT - 1} bytes of slack for it.
     */
    private static int alignedIndex(ByteBuf b, int from) {
        if (!b.hasMemoryAddress()) {
            return from;
        }
        long align = BlockDevice.BUFFER_ALIGNMENT;
        long a = b.memoryAddress();
        return (int) (((a + from + align - 1) & -align) - a);
    }

    /**
     * A data buffer of {@code length} bytes for {@code req}: where its namespace's device saves a copy with aligned
     * buffers (O_DIRECT), a slice at {@link BlockDevice#BUFFER_ALIGNMENT} of a buffer 511 bytes longer.
     */
    private ByteBuf dataBuffer(TcpRequest req, int length) {
        if (length == 0 || req.ns == null || !req.ns.bdev().wantsAlignedBuffers()) {
            return ctx.alloc().directBuffer(Math.max(length, 1));
        }
        ByteBuf b = ctx.alloc().directBuffer(length + BlockDevice.BUFFER_ALIGNMENT - 1);
        ByteBuf data = b.retainedSlice(alignedIndex(b, 0), length);
        b.release(); // the slice holds it now
        return data;
    }

    /**
     * Checks an H2CData PDU's header at {@code idx} of {@code in} (everything but the data is known from it)
     * and returns the request its {@code dataLen} bytes of data are for; null when the connection was
     * terminated instead.
     */
    TcpRequest startH2cData(ByteBuf in, int idx, int flags, int dataLen) {
        int cccid = in.getUnsignedShortLE(idx + DATA_CCCID);
        int ttag = in.getUnsignedShortLE(idx + DATA_TTAG);
        long datao = in.getUnsignedIntLE(idx + DATA_DATAO);
        long datal = in.getUnsignedIntLE(idx + DATA_DATAL);
        if (ttag >= table.length || table[ttag].state != TcpRequest.State.AWAITING_H2C_DATA) {
            reader.fatal(FES_INVALID_HEADER_FIELD, DATA_TTAG, in, idx);
            return null;
        }
        TcpRequest req = table[ttag];
        if (req.cid() != cccid) {
            reader.fatal(FES_INVALID_HEADER_FIELD, DATA_CCCID, in, idx);
            return null;
        }
        if (datal != dataLen || datal == 0) {
            reader.fatal(FES_INVALID_HEADER_FIELD, DATA_DATAL, in, idx);
            return null;
        }
        if (datao != req.h2cReceived || datao + datal > req.dataLength) {
            reader.fatal(FES_DATA_OUT_OF_RANGE, DATA_DATAO, in, idx);
            return null;
        }
        // LAST_PDU marks the H2CData that completes the R2T's data, and only that one (the Linux host sets
        // it exactly when no R2T data is left). Our one R2T asks for the whole transfer.
        if (((flags & FLAG_LAST_PDU) != 0) != (datao + datal == req.dataLength)) {
            reader.fatal(FES_INVALID_HEADER_FIELD, FLAGS, in, idx);
            return null;
        }
        return req;
    }

    /** An H2CData PDU of {@code req} is complete: once it was the transfer's last, the command runs. */
    void finishH2cData(TcpRequest req) {
        if (req.h2cReceived == req.dataLength) {
            leaving(req);
            req.state = TcpRequest.State.EXECUTING;
            if (req.digestFailed) {
                req.complete(NvmeStatus.TRANSIENT_TRANSPORT_ERROR);
            } else {
                try {
                    dispatcher.execute(req);
                } catch (RuntimeException e) {
                    commandFailed(req, e);
                }
            }
        }
    }

    // ---------------------------------------------------------------- completion

    @Override
    public void complete(Request r) {
        TcpRequest req = (TcpRequest) r;
        if (!reader.ready()) {
            observe(req);
            recycle(req);
            return;
        }
        observeSoon(req);
        boolean success = NvmeStatus.isSuccess(req.status);
        boolean successFlag = false;
        if (success && req.xferDir == Request.XFER_C2H && req.dataLength > 0) {
            // SUCCESS stands for a CapsuleResp whose DW0 and DW1 are 0; the spec lets a target send it to a host
            // that disabled SQ flow control (no SQHD to report); with c2hSuccessWithSqFlowControl to every host,
            // as SPDK's nvmf_tgt does
            successFlag = config.c2hSuccess && req.dw0 == 0 && req.dw1 == 0
                && (sqFlowDisabled || config.c2hSuccessWithSqFlowControl);
            if (req.frame != null) {
                writer.c2hFrame(req.frame, req.frameStart, req.dataLength, successFlag, req.dw0, req.dw1, sqhd, qid,
                    req.cid(), req.status);
                responded(req);
                flushUnlessBatching();
                return;
            }
            writer.c2hData(req.cid(), req.data, req.dataLength, successFlag);
        }
        if (!successFlag) {
            writer.capsuleResp(req.dw0, req.dw1, sqhd, qid, req.cid(), req.status);
        }
        responded(req);
        flushUnlessBatching();
    }
}
