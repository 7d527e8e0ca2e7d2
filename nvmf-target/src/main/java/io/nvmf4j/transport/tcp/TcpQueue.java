package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.IoObserver;
import io.nvmf4j.core.Queue;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Sgl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static io.nvmf4j.transport.tcp.TcpPdu.*;

/**
 * One NVMe/TCP connection = one queue pair, owned by one poll group (its Netty event loop) for life.
 *
 * <p>Receive path: wait for the 8-byte common header, check it (type against the connection phase,
 * HLEN, PLEN bounds, PDO, digest flags) before waiting for the rest, then take the whole PDU, check
 * the header digest and dispatch on type. A protocol violation ends the connection with a C2HTermReq;
 * a data digest error fails only its command (Transient Transport Error).
 *
 * <p>Requests come from a table sized to the queue depth; the transfer tag (TTAG) is the table index.
 * Responses written while a read batch is being processed are flushed once at the end of the batch.
 *
 * <p>Backpressure: a request (and its data buffer) stays taken until the last byte of its response has
 * been written to the socket (behind TLS: taken by the TLS handler, which copies it into its records), not
 * merely queued on the channel; see {@link #reapWritten()} for how that
 * is learnt without a promise per write. A host that sends more commands than its queue holds while
 * its responses are still unwritten is terminated (PDU Sequence Error). While the channel is not
 * writable (its outbound bytes above the high water mark set in {@link TcpTransport}) the queue decodes
 * no further PDU and stops reading the socket; it resumes when the channel drains below the low mark.
 *
 * <p>Timeouts: a connection that has not completed ICReq and Connect within
 * {@link TcpTransportConfig#connectTimeoutMs} is closed (logged once, counted through
 * {@link IoObserver#connectTimedOut}); a terminated or disconnected connection is closed once its last
 * PDUs (C2HTermReq, responses) are written or after {@link #TERMINATE_LINGER_MS}, whichever comes first
 * (a host that does not read would never take them).
 */
final class TcpQueue extends ByteToMessageDecoder implements Queue {
    /** The TLS PSK identity of the secure channel in front of this queue, null without TLS. */
    private TlsPsk.Identity tlsIdentity;
    private static final Logger LOG = LoggerFactory.getLogger(TcpQueue.class);
    /** Requests available before Connect tells the queue size. */
    private static final int INITIAL_REQUESTS = 4;
    private static final int C2H_CHUNK = 128 * 1024;
    /** The staging buffer's size: a batch of 4 KiB reads' headers at queue depth 128 (32 + 24 bytes each). */
    private static final int STAGE_SIZE = 8192;
    /** The most padding a C2HData header takes (HPDA 31: 128-byte alignment). */
    private static final int MAX_PAD = 128;
    /** H2CData left to receive from which the socket reads into the request's buffer itself. */
    static final int IN_PLACE_MIN = 2048;
    /** Socket reads that went straight into a request's buffer, all queues together (tests look at it). */
    static final java.util.concurrent.atomic.AtomicLong IN_PLACE_READS = new java.util.concurrent.atomic.AtomicLong();
    /** The transport name the observer gets (the registry's, never a second spelling). */
    private static final String TRANSPORT = TcpTransport.TYPE.name();
    /** How long a terminated connection waits for its C2HTermReq to be written before it is closed anyway. */
    static final long TERMINATE_LINGER_MS = 5000;
    /** Our decode never emits messages (it dispatches in place); the output list it is given stays empty. */
    private static final List<Object> NO_OUTPUT = List.of();

    /** Connection phases. */
    private enum Phase { AWAIT_ICREQ, READY, TERMINATING, CLOSED }

    private final CommandDispatcher dispatcher;
    private final TcpTransportConfig config;
    private final TransportLimits limits;
    private final ListenerConfig listener;
    private final CRC32C crc = new CRC32C();
    /** The data digest of the H2CData being received (its data may arrive across reads, with sends between). */
    private final CRC32C rxCrc = new CRC32C();
    private final IoObserver observer;

    private ChannelHandlerContext ctx;
    private Phase phase = Phase.AWAIT_ICREQ;
    private boolean hdgst;
    private boolean ddgst;
    private int hpda;
    private boolean inReadBatch;
    private boolean flushPending;
    private String peer = "?";

    private Controller controller;
    private Request connectInProgress;
    private int qid;
    private int sqsize;
    private int sqhd;
    private boolean sqFlowDisabled;

    private TcpRequest[] table = new TcpRequest[0];
    private int[] freeStack = new int[0];
    private int freeTop;
    /** Ring of the ttags of RESPONDING requests, in the order their responses were queued (= sent). */
    private int[] responding = new int[0];
    private int respondingHead;
    private int respondingCount;
    /** The last this many RESPONDING requests end in {@link #tx}, not yet handed to the channel. */
    private int stagedResponses;
    /** PDU headers (and digests) staged for one write, or null; see {@link #stage}. */
    private ByteBuf tx;
    /** Bytes handed to the channel so far, as its outbound buffer counts them (entry overhead included). */
    private long queuedBytes;

    /** Reading stopped because the channel is not writable; {@link #resumeReading()} undoes it. */
    private boolean readPaused;
    /** Inside {@link #decode}: writability events only take note, the decode loop acts on them. */
    private boolean decoding;
    private ScheduledFuture<?> connectTimer;
    /** The first exception that ended the connection, logged once when it is closed. */
    private Throwable failure;
    private int laterFailures;

    /** The request whose H2CData PDU's data (or data digest) is being received, else null. */
    private TcpRequest rxReq;
    /** Data bytes of the current H2CData PDU still to come. */
    private int rxDataLeft;
    /** The buffer last handed to the socket by {@link #inPlaceTarget()} (identifies its read), else null. */
    private ByteBuf inPlace;

    TcpQueue(CommandDispatcher dispatcher, TcpTransportConfig config, TransportLimits limits, ListenerConfig listener,
             IoObserver observer) {
        this.dispatcher = dispatcher;
        this.observer = observer;
        this.config = config;
        this.limits = limits;
        this.listener = listener;
        growTable(INITIAL_REQUESTS);
    }

    // ---------------------------------------------------------------- Queue

    @Override
    public int qid() {
        return qid;
    }

    @Override
    public Request connectInProgress() {
        return connectInProgress;
    }

    @Override
    public void connectInProgress(Request connect) {
        this.connectInProgress = connect;
    }

    @Override
    public Controller controller() {
        return controller;
    }

    @Override
    public void bind(Controller controller, int qid, int sqsize, boolean sqFlowControlDisabled) {
        this.controller = controller;
        this.qid = qid;
        this.sqsize = sqsize;
        this.sqFlowDisabled = sqFlowControlDisabled;
        cancelConnectTimer();
        // SQSIZE + 1 outstanding commands at most; the admin queue also holds the AERs the controller keeps
        growTable(sqsize + 1 + (qid == 0 ? Controller.AERL + 1 : 0));
        sqhd = 1 % (sqsize + 1); // the Connect itself was the first entry consumed
        observer.queueConnected(TRANSPORT, qid);
    }

    @Override
    public ScheduledExecutorService executor() {
        return ctx.executor();
    }

    @Override
    public ListenerConfig listener() {
        return listener;
    }

    @Override
    public TransportLimits limits() {
        return limits;
    }

    @Override
    public String peer() {
        return peer;
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
    public void disconnect(String reason) {
        if (ctx != null && ctx.channel().isOpen()) {
            LOG.debug("queue {} from {}: closing: {}", qid, peer, reason);
            // flush what is queued (e.g. the response to a Disconnect command) before closing
            writeStaged();
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            ctx.executor().schedule(this::closeAfterLinger, TERMINATE_LINGER_MS, TimeUnit.MILLISECONDS);
        }
    }

    private void growTable(int size) {
        if (size <= table.length) {
            return;
        }
        TcpRequest[] t = java.util.Arrays.copyOf(table, size);
        int[] stack = java.util.Arrays.copyOf(freeStack, size);
        for (int i = table.length; i < size; i++) {
            t[i] = new TcpRequest(this, i);
            stack[freeTop++] = i;
        }
        int[] ring = new int[size];
        for (int i = 0; i < respondingCount; i++) {
            ring[i] = responding[(respondingHead + i) % responding.length];
        }
        table = t;
        freeStack = stack;
        responding = ring;
        respondingHead = 0;
    }

    private TcpRequest allocate() {
        if (freeTop == 0) {
            return null;
        }
        return table[freeStack[--freeTop]];
    }

    private void recycle(TcpRequest req) {
        req.releaseBuffers();
        if (req.state != TcpRequest.State.FREE) {
            req.state = TcpRequest.State.FREE;
            freeStack[freeTop++] = req.ttag;
        }
    }

    /** The whole response of {@code req} is queued: it stays RESPONDING until those bytes are written. */
    private void responded(TcpRequest req) {
        req.state = TcpRequest.State.RESPONDING;
        if (tx != null && tx.isReadable()) {
            // its last bytes are staged: counted once they are handed to the channel (writeStaged)
            req.wireEnd = Long.MAX_VALUE;
            stagedResponses++;
        } else {
            req.wireEnd = queuedBytes;
        }
        responding[(respondingHead + respondingCount++) % responding.length] = req.ttag;
    }

    /**
     * Frees the RESPONDING requests whose responses the socket has taken.
     *
     * <p>How we learn that a response was written, without allocating per I/O: Netty's promises are
     * single-use (a completed promise cannot be reset, so a per-request preallocated one cannot serve
     * twice) and a listener needs a fresh promise per write. Instead we count: {@link #write} adds to
     * {@link #queuedBytes} exactly what the write added to the outbound buffer's
     * {@link ChannelOutboundBuffer#totalPendingWriteBytes()} (measured before and after, so Netty's
     * per-entry overhead is included whatever it is configured to), and the outbound buffer subtracts an
     * entry's size only when the entry is fully written (or failed at close). So {@code queuedBytes -
     * totalPendingWriteBytes()} is the number of bytes of our stream the socket has taken, and a response
     * that ended at {@link TcpRequest#wireEnd} or before is on the wire. The outbound buffer is FIFO, so
     * the RESPONDING requests are freed in queue order from {@link #responding}. Counting only errs late
     * (a byte queued outside {@link #write}, such as the Disconnect flush, delays the count), never early.
     * It is read after every flush, before a capsule takes a request, and on writability changes; a host
     * can only have seen a response that was written, so a capsule it sends after one always finds the
     * request freed.
     */
    private void reapWritten() {
        if (respondingCount == 0) {
            return;
        }
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        if (out == null) {
            return; // closed: channelInactive frees them
        }
        // A handler in front of the queue (TLS) copies what it is given before it returns (into its records),
        // so a response handed to it needs nothing of its request any more; what waits is its ciphertext, which
        // the channel's writability bounds. Otherwise: what the socket has taken.
        long written = ctx.pipeline().first() != this ? Long.MAX_VALUE - 1 : queuedBytes - out.totalPendingWriteBytes();
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

    // ---------------------------------------------------------------- channel events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.peer = hostPort(ctx.channel().remoteAddress());
        observer.connectionOpened(TRANSPORT);
    }

    /** {@code 10.0.0.1:45678} or {@code [fe80::1%eth0]:45678}, as the RDMA transport and SPDK write a peer. */
    static String hostPort(java.net.SocketAddress address) {
        if (address instanceof java.net.InetSocketAddress a && a.getAddress() != null) {
            String host = a.getAddress().getHostAddress();
            return (a.getAddress() instanceof java.net.Inet6Address ? "[" + host + "]" : host) + ":" + a.getPort();
        }
        return String.valueOf(address);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (config.connectTimeoutMs > 0) {
            connectTimer = ctx.executor().schedule(this::connectTimedOut, config.connectTimeoutMs, TimeUnit.MILLISECONDS);
        }
        super.channelActive(ctx);
    }

    /** No ICReq, or no successful Connect, within {@code connectTimeoutMs}: the socket is closed. */
    private void connectTimedOut() {
        connectTimer = null;
        if (controller != null || !ctx.channel().isOpen()) {
            return;
        }
        LOG.info("connection from {}: no {} within {} ms; closing", peer,
            phase == Phase.AWAIT_ICREQ ? "ICReq" : "Connect", config.connectTimeoutMs);
        observer.connectTimedOut(TRANSPORT);
        phase = Phase.TERMINATING;
        ctx.close();
    }

    private void cancelConnectTimer() {
        if (connectTimer != null) {
            connectTimer.cancel(false);
            connectTimer = null;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        inReadBatch = true;
        try {
            if (msg == inPlace && msg != null) {
                readInPlace((ByteBuf) msg);
                return;
            }
            super.channelRead(ctx, msg);
        } finally {
            inReadBatch = false;
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        flushBatch();
        if (readPaused) {
            // ByteToMessageDecoder would ask for another read when auto-read is off and it emitted nothing
            discardSomeReadBytes();
            ctx.fireChannelReadComplete();
            return;
        }
        super.channelReadComplete(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable()) {
            reapWritten();
            if (readPaused && !decoding) {
                resumeReading();
            }
        }
        super.channelWritabilityChanged(ctx);
    }

    /** Flushes the responses a read batch queued, then frees the requests the socket took. */
    private void flushBatch() {
        if (flushPending) {
            flushPending = false;
            writeStaged();
            ctx.flush();
        }
        reapWritten();
    }

    /** The channel is not writable: decode nothing more and stop reading the socket until it drains. */
    private void pauseReading() {
        if (!readPaused) {
            readPaused = true;
            ctx.channel().config().setAutoRead(false);
            LOG.debug("queue {} from {}: outbound buffer full; reading paused", qid, peer);
        }
    }

    /** Writable again: decodes the PDUs already buffered, then reads the socket again (unless paused anew). */
    private void resumeReading() {
        readPaused = false;
        ByteBuf buffered = internalBuffer();
        if (buffered.isReadable()) {
            inReadBatch = true;
            try {
                decode(ctx, buffered, NO_OUTPUT);
            } finally {
                inReadBatch = false;
            }
            flushBatch();
        }
        if (!readPaused && ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        phase = Phase.CLOSED;
        if (tx != null) {
            tx.release();
            tx = null;
        }
        stagedResponses = 0;
        rxReq = null;
        inPlace = null;
        cancelConnectTimer();
        observer.connectionClosed(TRANSPORT);
        if (failure != null) {
            LOG.warn("queue {} from {}: {}; connection closed{}", qid, peer, failure.toString(),
                laterFailures > 0 ? " (" + laterFailures + " more errors while closing, e.g. pending writes)" : "");
        }
        for (TcpRequest r : table) {
            if (r.state == TcpRequest.State.AWAITING_H2C_DATA || r.state == TcpRequest.State.RESPONDING) {
                recycle(r);
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
        super.channelInactive(ctx);
    }

    /** The first exception that ended the connection, or null (for the parser fuzzer). */
    Throwable failure() {
        return failure;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // One line per failed connection, written when it is closed: closing fails every pending write,
        // and each failure comes here (thousands for a host that stopped reading).
        if (failure == null && phase != Phase.CLOSED) {
            failure = cause;
        } else {
            laterFailures++;
            LOG.debug("queue {} from {}: further error: {}", qid, peer, cause.toString());
        }
        ctx.close();
    }

    // ---------------------------------------------------------------- receive

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        decoding = true;
        try {
            decodePdus(in);
        } finally {
            decoding = false;
        }
    }

    private void decodePdus(ByteBuf in) {
        reapWritten();
        while (in.isReadable()) {
            if (phase != Phase.AWAIT_ICREQ && phase != Phase.READY) {
                in.skipBytes(in.readableBytes());
                return;
            }
            if (rxReq != null) {
                // within an H2CData PDU's data or data digest: takes what is here, then on to the next PDU
                if (!receiveH2cData(in)) {
                    return;
                }
                continue;
            }
            if (!ctx.channel().isWritable()) {
                flushBatch();
                if (!ctx.channel().isWritable()) {
                    pauseReading();
                    return;
                }
            }
            if (in.readableBytes() < CH_SIZE) {
                return;
            }
            int idx = in.readerIndex();
            int type = in.getUnsignedByte(idx + TYPE);
            int flags = in.getUnsignedByte(idx + FLAGS);
            int hlen = in.getUnsignedByte(idx + HLEN);
            int pdo = in.getUnsignedByte(idx + PDO);
            long plen = in.getUnsignedIntLE(idx + PLEN);
            int error = checkCommonHeader(type, flags, hlen, pdo, plen);
            if (error >= 0) {
                fatal(error >>> 16, error & 0xFFFF, in, idx);
                return;
            }
            int len = (int) plen;
            int hd = hdgst ? DIGEST_SIZE : 0;
            if (type == H2C_DATA && len > hlen + hd) {
                // H2CData carrying data (checkCommonHeader: PDO past the header): only its header is awaited;
                // the data is then taken as it arrives, straight into the request's buffer (see receiveH2cData)
                if (in.readableBytes() < pdo) {
                    return;
                }
                if (hdgst && !headerDigestOk(in, idx, hlen)) {
                    fatal(FES_HEADER_DIGEST_ERROR, 0, in, idx);
                    return;
                }
                if (startH2cData(in, idx, flags, len - pdo - (ddgst ? DIGEST_SIZE : 0))) {
                    in.readerIndex(idx + pdo);
                }
                if (phase == Phase.TERMINATING) {
                    return;
                }
                continue;
            }
            if (in.readableBytes() < plen) {
                return;
            }
            if (type == ICREQ) {
                onIcReq(in, idx);
            } else if (type == H2C_TERM_REQ) {
                LOG.info("queue {} from {}: host terminated the connection (FES 0x{})", qid, peer,
                    Integer.toHexString(in.getUnsignedShortLE(idx + TERM_FES)));
                phase = Phase.TERMINATING;
                ctx.close();
            } else if (hdgst && !headerDigestOk(in, idx, hlen)) {
                fatal(FES_HEADER_DIGEST_ERROR, 0, in, idx);
                return;
            } else if (type == CAPSULE_CMD) {
                onCapsuleCmd(in, idx, hlen, pdo, len);
            } else {
                startH2cData(in, idx, flags, 0); // no data: refused (DATAL), after the checks of TTAG and CCCID
            }
            if (phase == Phase.TERMINATING) {
                return;
            }
            in.readerIndex(idx + len);
        }
    }

    /** Checks the common header; returns -1 when valid, else FES << 16 | FEI. */
    private int checkCommonHeader(int type, int flags, int hlen, int pdo, long plen) {
        if ((phase == Phase.AWAIT_ICREQ) != (type == ICREQ)) {
            return FES_PDU_SEQUENCE_ERROR << 16;
        }
        int expectedHlen;
        long dataLimit;
        switch (type) {
            case ICREQ:
                if (hlen != IC_SIZE) {
                    return fesInvalid(HLEN);
                }
                return plen == IC_SIZE ? -1 : fesInvalid(PLEN);
            case H2C_TERM_REQ:
                if (hlen != TERM_HLEN) {
                    return fesInvalid(HLEN);
                }
                return plen >= TERM_HLEN && plen <= TERM_HLEN + TERM_MAX_DATA ? -1 : fesInvalid(PLEN);
            case CAPSULE_CMD:
                expectedHlen = CMD_HLEN;
                dataLimit = qid == 0 ? ADMIN_IN_CAPSULE : limits.inCapsuleDataSize();
                break;
            case H2C_DATA:
                expectedHlen = DATA_HLEN;
                dataLimit = config.maxH2cData;
                break;
            default:
                return fesInvalid(TYPE);
        }
        if (hlen != expectedHlen) {
            return fesInvalid(HLEN);
        }
        if (((flags & FLAG_HDGST) != 0) != hdgst) {
            return fesInvalid(FLAGS);
        }
        int hd = hdgst ? DIGEST_SIZE : 0;
        int dd = ddgst ? DIGEST_SIZE : 0;
        if (plen < hlen + hd || plen > hlen + hd + 128 + dataLimit + dd) {
            return fesInvalid(PLEN);
        }
        if (plen > hlen + hd) {
            // PDO of a PDU with data: past the header (and its digest), a multiple of the CPDA alignment
            if (pdo < hlen + hd || pdo >= plen || pdo % CPDA_ALIGNMENT != 0) {
                return fesInvalid(PDO);
            }
            if (((flags & FLAG_DDGST) != 0) != ddgst) {
                return fesInvalid(FLAGS);
            }
            long dataLen = plen - pdo - dd;
            if (dataLen <= 0) {
                return fesInvalid(PLEN);
            }
            if (dataLen > dataLimit) {
                return type == H2C_DATA ? (FES_DATA_LIMIT_EXCEEDED << 16) | DATA_DATAL : fesInvalid(PLEN);
            }
        }
        return -1;
    }

    private static int fesInvalid(int fei) {
        return (FES_INVALID_HEADER_FIELD << 16) | fei;
    }

    private boolean headerDigestOk(ByteBuf in, int idx, int hlen) {
        return crc32c(in, idx, hlen) == in.getIntLE(idx + hlen);
    }

    private int crc32c(ByteBuf buf, int index, int length) {
        crc.reset();
        if (buf.nioBufferCount() == 1) {
            crc.update(buf.internalNioBuffer(index, length));
        } else {
            crc.update(buf.nioBuffer(index, length));
        }
        return (int) crc.getValue();
    }

    private void onIcReq(ByteBuf in, int idx) {
        int pfv = in.getUnsignedShortLE(idx + IC_PFV);
        int requestedHpda = in.getUnsignedByte(idx + IC_HPDA);
        int dgst = in.getUnsignedByte(idx + IC_DGST);
        if (pfv != 0) {
            fatal(FES_UNSUPPORTED_PARAMETER, IC_PFV, in, idx);
            return;
        }
        if (requestedHpda > 31) {
            fatal(FES_INVALID_HEADER_FIELD, IC_HPDA, in, idx);
            return;
        }
        ByteBuf resp = ctx.alloc().directBuffer(IC_SIZE);
        resp.writeZero(IC_SIZE);
        resp.setByte(TYPE, ICRESP);
        resp.setByte(HLEN, IC_SIZE);
        resp.setIntLE(PLEN, IC_SIZE);
        resp.setShortLE(IC_PFV, 0);
        resp.setByte(IC_CPDA, CPDA);
        resp.setByte(IC_DGST, dgst & 0x3);
        resp.setIntLE(IC_MAXH2CDATA, config.maxH2cData);
        write(resp);
        flushUnlessBatching();
        hpda = requestedHpda;
        hdgst = (dgst & 0x1) != 0;
        ddgst = (dgst & 0x2) != 0;
        phase = Phase.READY;
    }

    private void onCapsuleCmd(ByteBuf in, int idx, int hlen, int pdo, int plen) {
        TcpRequest req = allocate();
        if (req == null) {
            reapWritten();
            req = allocate();
        }
        if (req == null) {
            // More commands outstanding (not yet answered on the wire) than the queue holds: the host broke
            // flow control. nvmet and SPDK drop the connection without a C2HTermReq here; a capsule the
            // host may not send yet is a PDU Sequence Error (FEI reserved).
            LOG.info("queue {} from {}: more than {} commands outstanding", qid, peer, table.length);
            fatal(FES_PDU_SEQUENCE_ERROR, 0, in, idx);
            return;
        }
        req.reset(in, idx + CMD_SQE);
        req.startNanos = System.nanoTime();
        req.state = TcpRequest.State.EXECUTING;
        req.digestFailed = false;
        if (sqsize > 0) {
            sqhd = sqhd == sqsize ? 0 : sqhd + 1;
        }
        int hd = hdgst ? DIGEST_SIZE : 0;
        int dd = ddgst ? DIGEST_SIZE : 0;
        int dataLen = plen > hlen + hd ? plen - pdo - dd : 0;
        if (dataLen > 0 && ddgst && crc32c(in, idx + pdo, dataLen) != in.getIntLE(idx + plen - DIGEST_SIZE)) {
            LOG.info("queue {} from {}: data digest error on command cid {}", qid, peer, req.cid());
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
                sendR2t(req);
            } else {
                dispatcher.execute(req);
            }
        } catch (RuntimeException e) {
            commandFailed(req, e);
        }
    }

    /** A handler threw: complete the command (once) with Internal Error instead of losing it. */
    private void commandFailed(TcpRequest req, RuntimeException e) {
        LOG.warn("queue {} from {}: command opcode 0x{} cid {} failed: {}", qid, peer,
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
        req.data = ctx.alloc().directBuffer(Math.max(length, 1));
        if (sglId == Sgl.DATA_BLOCK_OFFSET) {
            req.data.setBytes(0, in, dataIndex, length);
        } else if (req.xferDir == Request.XFER_H2C && length > 0) {
            req.state = TcpRequest.State.AWAITING_H2C_DATA;
            req.h2cReceived = 0;
        }
        return NvmeStatus.SUCCESS;
    }

    /**
     * Checks an H2CData PDU's header (everything but the data is known from it) and makes the request the
     * receive target of its data; returns false when the connection was terminated instead.
     */
    private boolean startH2cData(ByteBuf in, int idx, int flags, int dataLen) {
        int cccid = in.getUnsignedShortLE(idx + DATA_CCCID);
        int ttag = in.getUnsignedShortLE(idx + DATA_TTAG);
        long datao = in.getUnsignedIntLE(idx + DATA_DATAO);
        long datal = in.getUnsignedIntLE(idx + DATA_DATAL);
        if (ttag >= table.length || table[ttag].state != TcpRequest.State.AWAITING_H2C_DATA) {
            fatal(FES_INVALID_HEADER_FIELD, DATA_TTAG, in, idx);
            return false;
        }
        TcpRequest req = table[ttag];
        if (req.cid() != cccid) {
            fatal(FES_INVALID_HEADER_FIELD, DATA_CCCID, in, idx);
            return false;
        }
        if (datal != dataLen || datal == 0) {
            fatal(FES_INVALID_HEADER_FIELD, DATA_DATAL, in, idx);
            return false;
        }
        if (datao != req.h2cReceived || datao + datal > req.dataLength) {
            fatal(FES_DATA_OUT_OF_RANGE, DATA_DATAO, in, idx);
            return false;
        }
        // LAST_PDU marks the H2CData that completes the R2T's data, and only that one (the Linux host sets
        // it exactly when no R2T data is left). Our one R2T asks for the whole transfer.
        if (((flags & FLAG_LAST_PDU) != 0) != (datao + datal == req.dataLength)) {
            fatal(FES_INVALID_HEADER_FIELD, FLAGS, in, idx);
            return false;
        }
        rxReq = req;
        rxDataLeft = dataLen;
        if (ddgst) {
            rxCrc.reset();
        }
        return true;
    }

    /**
     * Receives the data (and data digest) of the H2CData PDU {@link #startH2cData} began: copies what
     * {@code in} holds of it into the request's buffer at its offset. (When nothing else is buffered, the
     * socket reads the data into that buffer itself: see {@link InPlaceReads}.) Returns true once the PDU
     * is complete, false when more bytes are needed.
     */
    private boolean receiveH2cData(ByteBuf in) {
        TcpRequest req = rxReq;
        int n = Math.min(in.readableBytes(), rxDataLeft);
        if (n > 0) {
            int from = in.readerIndex();
            req.data.setBytes(req.h2cReceived, in, from, n);
            received(req, in, from, n);
            in.skipBytes(n);
        }
        if (rxDataLeft > 0) {
            return false;
        }
        if (ddgst) {
            if (in.readableBytes() < DIGEST_SIZE) {
                return false;
            }
            if (in.readIntLE() != (int) rxCrc.getValue()) {
                LOG.info("queue {} from {}: data digest error in H2CData for cid {}", qid, peer, req.cid());
                req.digestFailed = true;
            }
        }
        finishH2cData(req);
        return true;
    }

    /** The current H2CData PDU is complete: once it was the transfer's last, the command runs. */
    private void finishH2cData(TcpRequest req) {
        rxReq = null;
        if (req.h2cReceived == req.dataLength) {
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

    /** {@code n} bytes of the current H2CData PDU's data are in place in the request's buffer ({@code buf} holds them too). */
    private void received(TcpRequest req, ByteBuf buf, int index, int n) {
        if (ddgst) {
            if (buf.nioBufferCount() == 1) {
                rxCrc.update(buf.internalNioBuffer(index, n));
            } else {
                rxCrc.update(buf.nioBuffer(index, n));
            }
        }
        req.h2cReceived += n;
        rxDataLeft -= n;
    }

    /**
     * The slice of the current request's buffer the socket may read H2CData straight into, or null: only
     * while the data of an H2CData PDU is awaited, nothing else of the stream is buffered (the socket's next
     * bytes are that data), the queue reads the socket itself (no handler such as TLS in front of it), and
     * enough is left for the saved copy to matter.
     */
    ByteBuf inPlaceTarget() {
        if (rxReq == null || rxDataLeft < IN_PLACE_MIN || phase != Phase.READY || readPaused
            || internalBuffer().isReadable() || ctx.pipeline().first() != this) {
            return null;
        }
        inPlace = rxReq.data.retainedSlice(rxReq.h2cReceived, rxDataLeft).clear();
        return inPlace;
    }

    /** A read into {@link #inPlaceTarget()}: the data is where it belongs already; counts it. */
    private void readInPlace(ByteBuf buf) {
        inPlace = null;
        try {
            if (rxReq != null && phase == Phase.READY && buf.isReadable()) {
                IN_PLACE_READS.incrementAndGet();
                received(rxReq, buf, buf.readerIndex(), buf.readableBytes());
                if (rxDataLeft == 0 && !ddgst) {
                    finishH2cData(rxReq);
                } // else the digest comes through the decoder, which then finishes the PDU

            }
        } finally {
            buf.release();
        }
    }

    // ---------------------------------------------------------------- send

    @Override
    public void complete(Request r) {
        TcpRequest req = (TcpRequest) r;
        observe(req);
        if (phase != Phase.READY) {
            recycle(req);
            return;
        }
        boolean success = NvmeStatus.isSuccess(req.status);
        boolean successFlag = false;
        if (success && req.xferDir == Request.XFER_C2H && req.dataLength > 0) {
            successFlag = config.c2hSuccess && sqFlowDisabled;
            sendC2hData(req, successFlag);
        }
        if (!successFlag) {
            sendCapsuleResp(req);
        }
        responded(req);
        flushUnlessBatching();
    }

    private void observe(TcpRequest req) {
        if (controller == null) {
            return;
        }
        boolean ok = NvmeStatus.isSuccess(req.status);
        if (qid > 0) {
            int bytes = ok && req.xferDir != Request.XFER_NONE ? req.dataLength : 0;
            observer.ioCompleted(req.ns, req.sqe.opcode(), bytes, System.nanoTime() - req.startNanos, req.status);
        } else if (!ok) {
            observer.adminError(controller.subsystem(), req.sqe.opcode(), req.status);
        }
    }

    /**
     * Starts a PDU header of {@code hlen} bytes in the staging buffer and returns its index there. Headers
     * (and data digests) of consecutive PDUs are gathered in one buffer, handed to the channel as one write
     * when data from elsewhere must follow or at the flush (see {@link #stage}).
     */
    private int header(int type, int flags, int hlen, int pdo, int plen) {
        ByteBuf b = stage(hlen + DIGEST_SIZE + MAX_PAD);
        int at = b.writerIndex();
        b.writeZero(hlen);
        b.setByte(at + TYPE, type);
        b.setByte(at + FLAGS, flags | (hdgst ? FLAG_HDGST : 0));
        b.setByte(at + HLEN, hlen);
        b.setByte(at + PDO, pdo);
        b.setIntLE(at + PLEN, plen);
        return at;
    }

    private void sealHeader(int at, int hlen) {
        if (hdgst) {
            tx.writeIntLE(crc32c(tx, at, hlen));
        }
    }

    private void sendCapsuleResp(TcpRequest req) {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int at = header(CAPSULE_RESP, 0, RESP_HLEN, 0, RESP_HLEN + hd);
        ByteBuf b = tx;
        b.setIntLE(at + 8, req.dw0);
        b.setIntLE(at + 12, req.dw1);
        b.setShortLE(at + 16, sqhd);
        b.setShortLE(at + 18, qid);
        b.setShortLE(at + 20, req.cid());
        b.setShortLE(at + 22, NvmeStatus.toCqeField(req.status));
        sealHeader(at, RESP_HLEN);
    }

    private void sendR2t(TcpRequest req) {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int at = header(R2T, 0, DATA_HLEN, 0, DATA_HLEN + hd);
        ByteBuf b = tx;
        b.setShortLE(at + DATA_CCCID, req.cid());
        b.setShortLE(at + DATA_TTAG, req.ttag);
        b.setIntLE(at + DATA_DATAO, 0);
        b.setIntLE(at + DATA_DATAL, req.dataLength);
        sealHeader(at, DATA_HLEN);
        flushUnlessBatching();
    }

    private void sendC2hData(TcpRequest req, boolean successFlag) {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int dd = ddgst ? DIGEST_SIZE : 0;
        int align = (hpda + 1) * 4;
        int pdo = ((DATA_HLEN + hd + align - 1) / align) * align;
        int pad = pdo - DATA_HLEN - hd;
        for (int off = 0; off < req.dataLength; off += C2H_CHUNK) {
            int len = Math.min(C2H_CHUNK, req.dataLength - off);
            boolean last = off + len == req.dataLength;
            int flags = (ddgst ? FLAG_DDGST : 0) | (last ? FLAG_LAST_PDU : 0) | (last && successFlag ? FLAG_SUCCESS : 0);
            int at = header(C2H_DATA, flags, DATA_HLEN, pdo, pdo + len + dd);
            ByteBuf b = tx;
            b.setShortLE(at + DATA_CCCID, req.cid());
            b.setIntLE(at + DATA_DATAO, off);
            b.setIntLE(at + DATA_DATAL, len);
            sealHeader(at, DATA_HLEN);
            if (pad > 0) {
                b.writeZero(pad);
            }
            write(req.data.retainedSlice(off, len)); // the device's buffer itself, after the staged headers
            if (ddgst) {
                stage(DIGEST_SIZE).writeIntLE(crc32c(req.data, off, len));
            }
        }
    }

    /**
     * The staging buffer with room for {@code bytes} more: the one being filled, or a new one once that is
     * handed to the channel. One pooled buffer per batch of responses instead of one per PDU header.
     */
    private ByteBuf stage(int bytes) {
        ByteBuf b = tx;
        if (b != null && b.writableBytes() >= bytes) {
            return b;
        }
        writeStaged();
        b = tx = ctx.alloc().directBuffer(STAGE_SIZE);
        return b;
    }

    /** Hands the staged PDUs to the channel (before anything else is written, and at every flush). */
    private void writeStaged() {
        ByteBuf b = tx;
        if (b == null || !b.isReadable()) {
            return;
        }
        tx = null;
        queue(b);
        // the responses that ended in it are now counted: their last byte is where the count stands
        for (int i = respondingCount - stagedResponses; i < respondingCount; i++) {
            table[responding[(respondingHead + i) % responding.length]].wireEnd = queuedBytes;
        }
        stagedResponses = 0;
    }

    /** Queues {@code b} on the channel after what is staged (see {@link #stage}). */
    private void write(ByteBuf b) {
        writeStaged();
        queue(b);
    }

    /** Queues {@code b} on the channel and counts what it added to the outbound buffer (see {@link #reapWritten}). */
    private void queue(ByteBuf b) {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        long before = out != null ? out.totalPendingWriteBytes() : 0;
        ctx.write(b, ctx.voidPromise());
        if (out != null) {
            queuedBytes += out.totalPendingWriteBytes() - before;
        }
    }

    private void flushUnlessBatching() {
        if (inReadBatch) {
            flushPending = true;
        } else {
            writeStaged();
            ctx.flush();
            reapWritten();
        }
    }

    /** Ends the connection with a C2HTermReq carrying FES, FEI and the offending PDU header. */
    private void fatal(int fes, int fei, ByteBuf in, int idx) {
        int available = Math.min(in.writerIndex() - idx, TERM_MAX_DATA);
        int hlen = in.writerIndex() - idx > HLEN ? in.getUnsignedByte(idx + HLEN) : CH_SIZE;
        int errLen = Math.max(0, Math.min(available, Math.max(hlen, CH_SIZE)));
        LOG.info("queue {} from {}: fatal transport error FES 0x{} FEI {} (PDU type 0x{}); terminating", qid, peer,
            Integer.toHexString(fes), fei, Integer.toHexString(in.getUnsignedByte(idx)));
        ByteBuf b = ctx.alloc().directBuffer(TERM_HLEN + errLen);
        b.writeZero(TERM_HLEN);
        b.setByte(TYPE, C2H_TERM_REQ);
        b.setByte(HLEN, TERM_HLEN);
        b.setIntLE(PLEN, TERM_HLEN + errLen);
        b.setShortLE(TERM_FES, fes);
        b.setIntLE(TERM_FEI, fei);
        b.writeBytes(in, idx, errLen);
        phase = Phase.TERMINATING;
        in.skipBytes(in.readableBytes());
        observer.transportError(TRANSPORT, fes);
        writeStaged(); // what was answered before goes first
        ctx.writeAndFlush(b).addListener(ChannelFutureListener.CLOSE);
        ctx.executor().schedule(this::closeAfterLinger, TERMINATE_LINGER_MS, TimeUnit.MILLISECONDS);
    }

    /** What was queued before closing (C2HTermReq, last responses) was not taken in time (the host does not read). */
    private void closeAfterLinger() {
        if (ctx.channel().isOpen()) {
            LOG.info("queue {} from {}: last PDUs not taken within {} ms; closing", qid, peer, TERMINATE_LINGER_MS);
            ctx.close();
        }
    }
}
