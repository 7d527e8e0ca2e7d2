package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
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
import io.nvmf4j.transport.tcp.TcpRequest.State;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.transport.tcp.TcpPdu.*;

/**
 * One NVMe/TCP connection = one queue pair, owned by one poll group (its Netty event loop) for life: the
 * connection's phase, and the requests with their state machine, written down in {@link TcpRequest.State} and driven
 * by {@link #process}, one method per state (after SPDK's {@code lib/nvmf/tcp.c}). Its {@link TcpPduReader}, the
 * connection's Netty handler, frames the PDUs the host sends and raises one event for each ({@code on...}); what
 * the queue sends, flushes and closes goes through its {@link Wire} ({@link TcpPduWriter} on the channel), so the
 * machine runs in unit tests without a channel ({@code TcpQueueStateTest}). {@link #handler} makes the three for a
 * new connection.
 *
 * <p>Request states: a capsule takes a FREE request from a table sized to the queue depth (its index is the
 * transfer tag, TTAG) and is NEW: parsed, its SGL checked; NEED_BUFFER: its data buffer (the in-capsule data where
 * it was received or a copy, a read's response frame, a pooled buffer); a write whose data is not in the capsule is
 * TRANSFERRING_HOST_TO_CONTROLLER after its R2T until the last H2CData arrived; READY_TO_EXECUTE, then EXECUTING
 * in the command layer; at completion EXECUTED: its response PDUs are queued and it is
 * TRANSFERRING_CONTROLLER_TO_HOST until the socket has taken them ({@link #reapWritten()}); COMPLETED releases its
 * buffers and makes it FREE. When the connection closes, the requests that wait for host data or for the socket are
 * forced to COMPLETED, so cleanup runs on the normal path; those in the command layer end when they complete.
 *
 * <p>Connection phases ({@link Phase}): AWAIT_ICREQ, READY after the ICReq, TERMINATING once the connection is
 * ending, CLOSED. A protocol violation is decided in one place, {@link #terminate}, whether the reader found it
 * while framing or the queue found it (a capsule beyond the queue, an H2CData that does not fit its R2T): the
 * connection ends with a C2HTermReq. A data digest error fails only its command (Transient Transport Error).
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
 * PDUs (C2HTermReq, responses) are written or after {@link #TERMINATE_LINGER_MS}, whichever
 * comes first (a host that does not read would never take them).
 */
final class TcpQueue extends QueueBase {
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
    /**
     * Writes at least this long make the socket read an H2CData header alone ({@link TcpPduReader#headerReadSize()}):
     * one read more for a capsule that comes instead, against up to a receive buffer's worth (64 KiB) of the data
     * copied once more.
     */
    static final int HEADER_READ_MIN_DATA = 64 * 1024;
    /** How long a terminated or disconnected connection waits for its last PDUs to be written before it is closed. */
    static final long TERMINATE_LINGER_MS = 5000;
    /** Socket reads that went straight into a request's buffer, all queues together (tests look at it). */
    static final java.util.concurrent.atomic.AtomicLong IN_PLACE_READS = new java.util.concurrent.atomic.AtomicLong();
    /** Socket reads of an H2CData header alone ({@link TcpPduReader#headerReadSize()}), all queues together (tests). */
    static final java.util.concurrent.atomic.AtomicLong HEADER_READS = new java.util.concurrent.atomic.AtomicLong();
    /** Socket reads appended to the cut-off start of a PDU ({@link TcpPduReader#carryTarget}), all queues together (tests). */
    static final java.util.concurrent.atomic.AtomicLong CARRIED_READS = new java.util.concurrent.atomic.AtomicLong();
    /** The transport name the observer gets (the registry's, never a second spelling). */
    static final String TRANSPORT = TcpTransport.TYPE.name();

    /** Connection phases. */
    enum Phase {
        /** Connected; only an ICReq may come. */
        AWAIT_ICREQ,
        /** ICReq answered: capsules and H2CData come, responses go out. */
        READY,
        /** Ending (a fatal error, the host's H2CTermReq, the connect timeout): nothing more is received or answered. */
        TERMINATING,
        /** The channel is closed. */
        CLOSED,
    }

    /**
     * The connection under a queue: the PDUs the queue sends, its flushes and byte counts, its close.
     * {@link TcpPduWriter} on the Netty channel; {@code TcpQueueStateTest} records them without one.
     */
    interface Wire {
        /** Where data buffers and response frames come from (the channel's pooled allocator). */
        ByteBufAllocator alloc();

        /** The poll group's thread, which owns the queue. */
        ScheduledExecutorService executor();

        /** Whether the caller runs on {@link #executor()}. */
        boolean inExecutor();

        boolean isOpen();

        void icResp(int dgst, int maxH2cData);

        /** The digests and the C2HData data alignment the ICReq negotiated. */
        void negotiated(boolean hdgst, boolean ddgst, int hpda);

        void capsuleResp(int dw0, int dw1, int sqhd, int sqid, int cid, int status);

        /** One R2T for the whole transfer ({@code length} bytes from offset 0). */
        void r2t(int cid, int ttag, int length);

        /** A read's data as C2HData PDUs from {@code data} itself; the last with SUCCESS when {@code successFlag}. */
        void c2hData(int cid, ByteBuf data, int length, boolean successFlag);

        /** Bytes a read's response frame holds before its data (C2HData header, digest, padding). */
        int frameHead();

        /** Bytes a read's response frame holds after its data (data digest, CapsuleResp). */
        int frameTail();

        /** A read's whole response built around its data in {@code frame} (see {@link TcpPduWriter#c2hFrame}). */
        void c2hFrame(ByteBuf frame, int start, int length, boolean successFlag, int dw0, int dw1, int sqhd, int sqid,
                      int cid, int status);

        /**
         * A C2HTermReq with FES, FEI and the offending PDU's header from {@code idx} of {@code pdu}, after what is
         * queued; the connection closes once it is written.
         */
        void termReq(int fes, int fei, ByteBuf pdu, int idx);

        /** Closes the connection: at once, or once what is queued is written ({@code flushFirst}). */
        void close(boolean flushFirst);

        /** Whether a read batch is being processed (flushes wait for its end). */
        boolean batching();

        /** Flushes what is queued, or notes it for the end of the read batch; true when it flushed. */
        boolean flushUnlessBatching();

        /** At the end of a read batch: flushes what the batch queued; true when it did. */
        boolean flushBatch();

        /** Bytes are staged that the connection has not been given yet ({@link TcpQueue#stagedQueued} tells when). */
        boolean staging();

        /** Bytes handed to the connection so far. */
        long queuedBytes();

        /**
         * How many of {@link #queuedBytes()} the connection has taken (written, or copied by a handler in front);
         * negative once closed.
         */
        long takenBytes();

        /** The connection closed: what the wire holds goes back to the pool. */
        void release();
    }

    private final CommandDispatcher dispatcher;
    private final TcpTransportConfig config;

    private Wire wire;
    private String peer = "?";
    private Phase phase = Phase.AWAIT_ICREQ;
    private ScheduledFuture<?> connectTimer;
    private boolean sqFlowDisabled;
    /** The TLS PSK identity of the secure channel in front of this queue, null without TLS. */
    private TlsPsk.Identity tlsIdentity;

    private TcpRequest[] table = new TcpRequest[0];
    /** Ring of the ttags of the requests whose responses are queued, in the order they were queued (= sent). */
    private int[] responding = new int[0];
    private int respondingHead;
    private int respondingCount;
    /** The last this many responding requests end in the wire's staged bytes, not yet handed to the connection. */
    private int stagedResponses;
    /** The connection closed: request slots release their own buffers as they are freed. */
    private boolean closedDown;
    /**
     * Requests TRANSFERRING_HOST_TO_CONTROLLER of at least {@link #HEADER_READ_MIN_DATA} bytes: while there are any,
     * the reader has the socket read an H2CData header alone ({@link TcpPduReader#headerReadSize()}).
     */
    private int awaitingLargeH2c;
    /**
     * The ttags of requests completed in the current read batch whose latency is recorded at its flush
     * ({@link TcpRequest#unobserved}; an entry whose request was freed and recorded meanwhile is skipped).
     */
    private int[] unobserved = new int[0];
    private int unobservedCount;

    TcpQueue(CommandDispatcher dispatcher, TcpTransportConfig config, TransportLimits limits, ListenerConfig listener,
             IoObserver observer) {
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

    /** The connection under this queue, and its peer as {@link #hostPort} writes it. */
    void attach(Wire wire, String peer) {
        this.wire = wire;
        this.peer = peer;
    }

    Phase phase() {
        return phase;
    }

    /** PDUs are still taken from the host (an ICReq awaited, or READY). */
    boolean receiving() {
        return phase == Phase.AWAIT_ICREQ || phase == Phase.READY;
    }

    /** The request with transfer tag {@code ttag}, or null (for tests and logs). */
    TcpRequest request(int ttag) {
        return ttag >= 0 && ttag < table.length ? table[ttag] : null;
    }

    /** Requests not FREE (for tests and logs). */
    int outstanding() {
        return table.length - freeSlots();
    }

    // ---------------------------------------------------------------- Queue

    @Override
    public void bind(Controller controller, int qid, int sqsize, boolean sqFlowControlDisabled) {
        super.bind(controller, qid, sqsize, sqFlowControlDisabled);
        this.sqFlowDisabled = sqFlowControlDisabled;
        cancelConnectTimer();
        // SQSIZE + 1 outstanding commands at most; the admin queue also holds the AERs the controller keeps
        growTable(sqsize + 1 + (qid == 0 ? Controller.AERL + 1 : 0));
    }

    @Override
    public ScheduledExecutorService executor() {
        return wire.executor();
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
    public boolean isClosed() {
        return closedDown;
    }

    @Override
    public void disconnect(String reason) {
        Wire w = wire;
        if (w == null) {
            return;
        }
        if (!w.inExecutor()) {
            // the wire is the poll group's alone (Controller.destroy runs on the caller's thread)
            try {
                w.executor().execute(() -> disconnect(reason));
            } catch (RejectedExecutionException e) {
                LOG.debug("queue {} from {}: poll group stopped; its shutdown closes the connection", qid, peer);
            }
            return;
        }
        if (w.isOpen()) {
            LOG.debug("queue {} from {}: closing: {}", qid, peer, reason);
            w.close(true); // what is queued (e.g. the response to a Disconnect command) goes out first
            lingerThenClose();
        }
    }

    /** The largest in-capsule data a command capsule may carry on this queue. */
    int inCapsuleDataLimit() {
        return qid == 0 ? ADMIN_IN_CAPSULE : limits.inCapsuleDataSize();
    }

    /** Writes of at least {@link #HEADER_READ_MIN_DATA} bytes whose data the host is still to send. */
    int awaitingLargeH2c() {
        return awaitingLargeH2c;
    }

    /** {@code 10.0.0.1:45678} or {@code [fe80::1%eth0]:45678}, as the RDMA transport and SPDK write a peer. */
    static String hostPort(java.net.SocketAddress address) {
        if (address instanceof java.net.InetSocketAddress a && a.getAddress() != null) {
            String host = a.getAddress().getHostAddress();
            return (a.getAddress() instanceof java.net.Inet6Address ? "[" + host + "]" : host) + ":" + a.getPort();
        }
        return String.valueOf(address);
    }

    // ---------------------------------------------------------------- connection events (from the reader)

    /** The connection is up: the ICReq and the Connect must come within {@code connectTimeoutMs}. */
    void opened() {
        if (config.connectTimeoutMs > 0) {
            connectTimer = wire.executor().schedule(this::connectTimedOut, config.connectTimeoutMs,
                TimeUnit.MILLISECONDS);
        }
    }

    /** No ICReq, or no successful Connect, within {@code connectTimeoutMs}: the socket is closed. */
    private void connectTimedOut() {
        connectTimer = null;
        if (controller != null || !wire.isOpen()) {
            return;
        }
        LOG.info("connection from {}: no {} within {} ms; closing", peer,
            phase == Phase.AWAIT_ICREQ ? "ICReq" : "Connect", config.connectTimeoutMs);
        observer.connectTimedOut(TRANSPORT);
        phase = Phase.TERMINATING;
        wire.close(false);
    }

    private void cancelConnectTimer() {
        if (connectTimer != null) {
            connectTimer.cancel(false);
            connectTimer = null;
        }
    }

    /** A valid ICReq: answered with the ICResp; later PDUs carry the digests it asked for. */
    void onIcReq(int dgst, int hpda) {
        wire.icResp(dgst, config.maxH2cData);
        flushUnlessBatching();
        wire.negotiated((dgst & 0x1) != 0, (dgst & 0x2) != 0, hpda);
        phase = Phase.READY;
    }

    /** The host sent an H2CTermReq: the connection is closed. */
    void onHostTermReq(int fes) {
        LOG.info("queue {} from {}: host terminated the connection (FES 0x{})", qid, peer, Integer.toHexString(fes));
        phase = Phase.TERMINATING;
        wire.close(false);
    }

    /**
     * Ends the connection with a C2HTermReq carrying FES, FEI and the offending PDU's header from {@code idx} of
     * {@code pdu}: the one place a protocol violation is decided, for the reader's framing errors and the queue's own.
     * The queue then neither receives nor answers.
     */
    void terminate(int fes, int fei, ByteBuf pdu, int idx) {
        LOG.info("queue {} from {}: fatal transport error FES 0x{} FEI {} (PDU type 0x{}); terminating", qid, peer,
            Integer.toHexString(fes), fei, Integer.toHexString(pdu.getUnsignedByte(idx)));
        phase = Phase.TERMINATING;
        observer.transportError(TRANSPORT, fes);
        wire.termReq(fes, fei, pdu, idx);
        lingerThenClose();
    }

    /** Closes the connection if what was queued before closing is not taken in time (the host does not read). */
    private void lingerThenClose() {
        wire.executor().schedule(() -> {
            if (wire.isOpen()) {
                LOG.info("queue {} from {}: last PDUs not taken within {} ms; closing", qid, peer, TERMINATE_LINGER_MS);
                wire.close(false);
            }
        }, TERMINATE_LINGER_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * The connection closed: requests waiting for host data or for the socket are forced to COMPLETED (their buffers
     * released), the slots' own buffers released, the controller told.
     */
    void closed() {
        phase = Phase.CLOSED;
        cancelConnectTimer();
        wire.release();
        stagedResponses = 0;
        closedDown = true;
        respondingCount = 0;
        for (TcpRequest r : table) {
            switch (r.state) {
                case TRANSFERRING_HOST_TO_CONTROLLER, TRANSFERRING_CONTROLLER_TO_HOST -> {
                    r.state = State.COMPLETED;
                    process(r);
                }
                case FREE -> releaseOwnFrame(r);
                default -> {
                    // in the command layer: complete() frees it (and its own buffer), without a response
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
    }

    // ---------------------------------------------------------------- request events (from the reader)

    /**
     * A CapsuleCmd PDU at {@code idx} of {@code in}, with {@code dataLen} bytes of in-capsule data at
     * {@code idx + pdo} ({@code digestOk}: its data digest held, or there was none), read from the socket at
     * {@code arrivalNanos}: a FREE request becomes NEW and runs as far as it can.
     */
    void onCapsuleCmd(ByteBuf in, int idx, int pdo, int dataLen, boolean digestOk, long arrivalNanos) {
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
            terminate(FES_PDU_SEQUENCE_ERROR, 0, in, idx);
            return;
        }
        req.reset(in, idx + CMD_SQE);
        req.startNanos = arrivalNanos;
        req.digestFailed = !digestOk;
        req.capsule = in;
        req.capsuleDataIndex = idx + pdo;
        req.capsuleDataLength = dataLen;
        advanceSqhd();
        req.state = State.NEW;
        process(req);
    }

    /**
     * Checks an H2CData PDU's header at {@code idx} of {@code in} (everything but the data is known from it)
     * and returns the request its {@code dataLen} bytes of data are for; null when the connection was
     * terminated instead. The reader places the data at {@code DATAO} of the request's buffer.
     */
    TcpRequest onH2cDataHeader(ByteBuf in, int idx, int flags, int dataLen) {
        int cccid = in.getUnsignedShortLE(idx + DATA_CCCID);
        int ttag = in.getUnsignedShortLE(idx + DATA_TTAG);
        long datao = in.getUnsignedIntLE(idx + DATA_DATAO);
        long datal = in.getUnsignedIntLE(idx + DATA_DATAL);
        TcpRequest req = request(ttag);
        if (req == null || req.state != State.TRANSFERRING_HOST_TO_CONTROLLER) {
            terminate(FES_INVALID_HEADER_FIELD, DATA_TTAG, in, idx);
            return null;
        }
        if (req.cid() != cccid) {
            terminate(FES_INVALID_HEADER_FIELD, DATA_CCCID, in, idx);
            return null;
        }
        if (datal != dataLen || datal == 0) {
            terminate(FES_INVALID_HEADER_FIELD, DATA_DATAL, in, idx);
            return null;
        }
        if (datao != req.h2cReceived || datao + datal > req.dataLength) {
            terminate(FES_DATA_OUT_OF_RANGE, DATA_DATAO, in, idx);
            return null;
        }
        // LAST_PDU marks the H2CData that completes the R2T's data, and only that one (the Linux host sets
        // it exactly when no R2T data is left). Our one R2T asks for the whole transfer.
        if (((flags & FLAG_LAST_PDU) != 0) != (datao + datal == req.dataLength)) {
            terminate(FES_INVALID_HEADER_FIELD, FLAGS, in, idx);
            return null;
        }
        return req;
    }

    /**
     * The {@code dataLen} bytes of an H2CData PDU of {@code req} are in its buffer ({@code digestOk}: its data digest
     * held, or there was none): after the transfer's last, the request is READY_TO_EXECUTE.
     */
    void onH2cData(TcpRequest req, int dataLen, boolean digestOk) {
        req.h2cReceived += dataLen;
        if (!digestOk) {
            LOG.info("queue {} from {}: data digest error in H2CData for cid {}", qid, peer, req.cid());
            req.digestFailed = true;
        }
        if (req.h2cReceived == req.dataLength) {
            uncountLargeH2c(req);
            req.state = State.READY_TO_EXECUTE;
            process(req);
        }
    }

    // ---------------------------------------------------------------- the state machine

    /**
     * Runs {@code req} through the states until it has to wait for an event. A completion inside a step (a handler
     * that completes at once) runs it from EXECUTED in a nested call, so that the response is queued when
     * {@code Request.complete} returns, as the command layer expects (a Disconnect's response goes out before the
     * queue closes); the outer call then finds the state moved on and stops where the nested one left it.
     */
    void process(TcpRequest req) {
        boolean outer = req.inProcess;
        req.inProcess = true;
        try {
            State prev;
            do {
                prev = req.state;
                try {
                    switch (prev) {
                        case NEW -> onNew(req);
                        case NEED_BUFFER -> onNeedBuffer(req);
                        case READY_TO_EXECUTE -> onReadyToExecute(req);
                        case EXECUTED -> onExecuted(req);
                        case COMPLETED -> onCompleted(req);
                        default -> {
                            // FREE, TRANSFERRING_HOST_TO_CONTROLLER, EXECUTING, TRANSFERRING_CONTROLLER_TO_HOST:
                            // an event moves it on
                        }
                    }
                } catch (RuntimeException e) {
                    commandFailed(req, e);
                }
            } while (req.state != prev);
        } finally {
            req.inProcess = outer;
        }
    }

    /** NEW: a failed data digest or parse ends the command; else it needs a buffer or is ready to run. */
    private void onNew(TcpRequest req) {
        if (req.digestFailed) {
            LOG.info("queue {} from {}: data digest error on command cid {}", qid, peer, req.cid());
            req.complete(NvmeStatus.TRANSIENT_TRANSPORT_ERROR);
            return;
        }
        int status = dispatcher.parse(req);
        if (status == NvmeStatus.SUCCESS && req.xferDir != Request.XFER_NONE) {
            status = checkSgl(req);
        }
        if (status != NvmeStatus.SUCCESS) {
            req.capsule = null;
            req.complete(status);
            return;
        }
        if (req.xferDir == Request.XFER_NONE) {
            req.capsule = null;
            req.state = State.READY_TO_EXECUTE;
        } else {
            req.state = State.NEED_BUFFER;
        }
    }

    /** Checks SGL 1 against the command and the capsule; sets the transfer's length. */
    private int checkSgl(TcpRequest req) {
        int sglId = req.sqe.sglId();
        int length = req.sqe.sglLength();
        int capsuleDataLen = req.capsuleDataLength;
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
        req.inCapsule = sglId == Sgl.DATA_BLOCK_OFFSET;
        return NvmeStatus.SUCCESS;
    }

    /**
     * NEED_BUFFER: the in-capsule data where it was received (or copied out), a read's response frame, or a pooled
     * buffer; a write whose data the host is still to send gets its R2T and waits for it.
     */
    private void onNeedBuffer(TcpRequest req) {
        ByteBuf in = req.capsule;
        req.capsule = null;
        int length = req.dataLength;
        if (req.inCapsule && length > 0 && in.hasMemoryAddress()) {
            // in-capsule data used where it was received: a slice of the receive buffer, which Netty neither
            // compacts nor reuses while a slice holds it (it moves on to a new buffer instead)
            req.data = in.retainedSlice(req.capsuleDataIndex, length);
        } else if (req.xferDir == Request.XFER_C2H && length > 0 && length <= TcpPduWriter.C2H_CHUNK) {
            // a read that one C2HData carries: its data goes where the response will be built around it, at an
            // address a device can read into in place (O_DIRECT); the slack does not change the pool's size class
            // of the usual sizes (4 KiB + headers and 4 KiB + 511 + headers are both 5 KiB)
            int head = wire.frameHead();
            ByteBuf frame = responseFrame(req, head + BlockDevice.BUFFER_ALIGNMENT - 1 + length + wire.frameTail(),
                length);
            int dataAt = alignedIndex(frame, head);
            req.frame = frame;
            req.frameStart = dataAt - head;
            req.data = frame.retainedSlice(dataAt, length);
        } else {
            req.data = dataBuffer(req, length);
            if (req.inCapsule) {
                req.data.setBytes(0, in, req.capsuleDataIndex, length);
            } else if (req.xferDir == Request.XFER_H2C && length > 0) {
                req.h2cReceived = 0;
                if (length >= HEADER_READ_MIN_DATA) {
                    req.largeH2c = true;
                    awaitingLargeH2c++;
                }
                req.state = State.TRANSFERRING_HOST_TO_CONTROLLER;
                wire.r2t(req.cid(), req.ttag, length);
                flushUnlessBatching();
                return;
            }
        }
        req.state = State.READY_TO_EXECUTE;
    }

    /** READY_TO_EXECUTE: the handler runs (a data digest that failed on the way ends the command instead). */
    private void onReadyToExecute(TcpRequest req) {
        if (req.digestFailed) {
            req.complete(NvmeStatus.TRANSIENT_TRANSPORT_ERROR);
            return;
        }
        req.state = State.EXECUTING;
        dispatcher.execute(req); // a synchronous complete() runs the request on from EXECUTED
    }

    /**
     * EXECUTED: the response PDUs are queued (a read's data as C2HData, its CapsuleResp left out where the SUCCESS
     * flag may stand for it); without a connection to answer on, the request is COMPLETED at once.
     */
    private void onExecuted(TcpRequest req) {
        if (phase != Phase.READY) {
            observe(req);
            req.state = State.COMPLETED;
            return;
        }
        observeSoon(req);
        boolean successFlag = false;
        if (NvmeStatus.isSuccess(req.status) && req.xferDir == Request.XFER_C2H && req.dataLength > 0) {
            // SUCCESS stands for a CapsuleResp whose DW0 and DW1 are 0; the spec lets a target send it to a host
            // that disabled SQ flow control (no SQHD to report); with c2hSuccessWithSqFlowControl to every host,
            // as SPDK's nvmf_tgt does
            successFlag = config.c2hSuccess && req.dw0 == 0 && req.dw1 == 0
                && (sqFlowDisabled || config.c2hSuccessWithSqFlowControl);
            if (req.frame != null) {
                wire.c2hFrame(req.frame, req.frameStart, req.dataLength, successFlag, req.dw0, req.dw1, sqhd, qid,
                    req.cid(), req.status);
                responded(req);
                return;
            }
            wire.c2hData(req.cid(), req.data, req.dataLength, successFlag);
        }
        if (!successFlag) {
            wire.capsuleResp(req.dw0, req.dw1, sqhd, qid, req.cid(), req.status);
        }
        responded(req);
    }

    /**
     * The whole response of {@code req} is queued: it is TRANSFERRING_CONTROLLER_TO_HOST until those bytes are
     * written (a flush that finds them written already makes it COMPLETED).
     */
    private void responded(TcpRequest req) {
        req.state = State.TRANSFERRING_CONTROLLER_TO_HOST;
        if (wire.staging()) {
            // its last bytes are staged: counted once they are handed to the connection (stagedQueued)
            req.wireEnd = Long.MAX_VALUE;
            stagedResponses++;
        } else {
            req.wireEnd = wire.queuedBytes();
        }
        responding[(respondingHead + respondingCount++) % responding.length] = req.ttag;
        flushUnlessBatching();
    }

    /** COMPLETED: the buffers are released (the slot's own kept unless the connection closed) and the slot is FREE. */
    private void onCompleted(TcpRequest req) {
        if (req.unobserved) {
            req.unobserved = false;
            observe(req); // freed before its batch's flush (the connection closed): recorded now, never lost
        }
        uncountLargeH2c(req);
        req.capsule = null;
        req.releaseBuffers();
        if (req.frame != null) {
            if (req.frame != req.ownFrame) {
                req.frame.release();
            }
            req.frame = null;
        }
        if (closedDown) {
            releaseOwnFrame(req);
        }
        req.state = State.FREE;
        freeSlot(req.ttag);
    }

    /** A step threw: the command is completed (once) with Internal Error instead of being lost. */
    private void commandFailed(TcpRequest req, RuntimeException e) {
        LOG.warn("queue {} from {}: command opcode 0x{} cid {} failed: {}", qid, peer,
            Integer.toHexString(req.sqe.opcode()), req.cid(), e.toString(), e);
        switch (req.state) {
            case NEW, NEED_BUFFER, TRANSFERRING_HOST_TO_CONTROLLER, READY_TO_EXECUTE, EXECUTING -> {
                req.capsule = null;
                req.complete(NvmeStatus.INTERNAL_ERROR);
            }
            default -> {
                // its status is known already (the response or the release failed): nothing to complete
            }
        }
    }

    // ---------------------------------------------------------------- completion from the core

    /** The command ended (exactly once): EXECUTED, and its response is queued before this returns. */
    @Override
    public void complete(Request r) {
        TcpRequest req = (TcpRequest) r;
        req.state = State.EXECUTED;
        process(req);
    }

    // ---------------------------------------------------------------- request table and buffers

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

    private void uncountLargeH2c(TcpRequest req) {
        if (req.largeH2c) {
            req.largeH2c = false;
            awaitingLargeH2c--;
        }
    }

    private static void releaseOwnFrame(TcpRequest req) {
        if (req.ownFrame != null) {
            req.ownFrame.release();
            req.ownFrame = null;
        }
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
                    own = wire.alloc().directBuffer(size);
                    req.ownFrame = own;
                }
                return own;
            }
        }
        return wire.alloc().directBuffer(size);
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
            return wire.alloc().directBuffer(Math.max(length, 1));
        }
        ByteBuf b = wire.alloc().directBuffer(length + BlockDevice.BUFFER_ALIGNMENT - 1);
        ByteBuf data = b.retainedSlice(alignedIndex(b, 0), length);
        b.release(); // the slice holds it now
        return data;
    }

    // ---------------------------------------------------------------- writes taken, batches flushed

    /**
     * The wire handed its staged bytes to the connection: the responses that ended in them are counted, their last
     * byte where the count stands ({@code queuedBytes}).
     */
    void stagedQueued(long queuedBytes) {
        for (int i = respondingCount - stagedResponses; i < respondingCount; i++) {
            table[responding[(respondingHead + i) % responding.length]].wireEnd = queuedBytes;
        }
        stagedResponses = 0;
    }

    /**
     * Makes COMPLETED the requests whose responses the connection has taken.
     *
     * <p>How we learn that a response was written, without allocating per I/O: Netty's promises are
     * single-use (a completed promise cannot be reset, so a per-request preallocated one cannot serve
     * twice) and a listener needs a fresh promise per write. Instead we count: the wire adds to
     * {@link Wire#queuedBytes()} exactly what each write added to the channel's outbound buffer, and
     * {@link Wire#takenBytes()} is how much of that the socket has taken (see {@link TcpPduWriter#takenBytes()}),
     * so a response that ended at {@link TcpRequest#wireEnd} or before is on the wire. The outbound buffer is FIFO,
     * so the responses are freed in queue order from {@link #responding}. Counting only errs late (a byte queued
     * outside the writer, such as the Disconnect flush, delays the count), never early. It is read after every
     * flush, before a capsule takes a request, and on writability changes; a host can only have seen a response
     * that was written, so a capsule it sends after one always finds the request freed.
     */
    void reapWritten() {
        if (respondingCount == 0) {
            return;
        }
        long taken = wire.takenBytes();
        if (taken < 0) {
            return; // closed: closed() frees them
        }
        while (respondingCount > 0) {
            TcpRequest r = table[responding[respondingHead]];
            if (r.wireEnd > taken) {
                return;
            }
            respondingHead = (respondingHead + 1) % responding.length;
            respondingCount--;
            r.state = State.COMPLETED;
            if (!r.inProcess) {
                process(r);
            }
        }
    }

    /**
     * Flushes the responses a read batch queued, records the latencies of its commands with one clock reading
     * (capsule arrival to this flush), then frees the requests the socket took.
     */
    void flushBatch() {
        wire.flushBatch();
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
     * for all the batch's commands instead of one each (at QD 32 a batch holds a dozen commands or more).
     */
    private void observeSoon(TcpRequest req) {
        if (wire.batching() && unobservedCount < unobserved.length) {
            req.unobserved = true;
            unobserved[unobservedCount++] = req.ttag;
        } else {
            observe(req);
        }
    }

    private void flushUnlessBatching() {
        if (wire.flushUnlessBatching()) {
            reapWritten();
        }
    }
}
