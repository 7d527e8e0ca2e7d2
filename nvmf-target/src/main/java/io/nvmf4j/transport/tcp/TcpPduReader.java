package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.runtime.FatalErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.zip.CRC32C;

import static io.nvmf4j.transport.tcp.TcpPdu.*;

/**
 * The receive side of one NVMe/TCP connection, and its Netty handler: frames and checks the PDUs the host
 * sends (common header against the connection's phase, PDU header, digests, data) and raises one event on its
 * {@link TcpQueue} for each, which decides what follows; passes the channel's events on (the connection up and
 * down, writability) and pauses reading while the channel is not writable. It never sends: a PDU that breaks the
 * protocol is raised as {@link TcpQueue#terminate}, and once the queue no longer receives
 * ({@link TcpQueue#receiving()}) the rest of the stream is dropped.
 *
 * <p>The receive states ({@link RecvState}), as the kernel's {@code nvmet_tcp_recv_state} and SPDK's
 * {@code nvme_tcp_pdu_recv_state} write them down:
 * <ul>
 * <li>{@code HEADER}: wait for the 8-byte common header; check it against the connection phase (type, HLEN,
 * PLEN bounds, PDO, digest flags) before waiting for more; then for an H2CData with data only its header
 * (PDU-specific header and header digest) is awaited and the state moves to {@code H2C_DATA}; every other PDU
 * is taken whole (header digest checked, in-capsule data digest checked) and dispatched.</li>
 * <li>{@code H2C_DATA}: the data of that H2CData goes into its request's buffer as it arrives, with the data
 * digest computed on the way; when nothing else is buffered the socket reads it there itself
 * ({@link InPlaceReads}).</li>
 * <li>{@code H2C_DIGEST}: the PDU's data digest; a mismatch fails only its command.</li>
 * <li>{@code ERROR}: the connection is ending (a C2HTermReq, the host's H2CTermReq, a timeout, the close); the
 * rest is dropped.</li>
 * </ul>
 */
final class TcpPduReader extends ByteToMessageDecoder {
    /** The queue's logger: the receive side's lines are the queue's. */
    private static final Logger LOG = LoggerFactory.getLogger(TcpQueue.class);
    /** H2CData left to receive from which the socket reads into the request's buffer itself. */
    static final int IN_PLACE_MIN = 2048;
    /** The most unread bytes {@link #carryTarget} moves to the front of the next receive buffer (a PDU or two). */
    static final int CARRY_MAX = 32 * 1024;
    /** Our decode never emits messages (it dispatches in place); the output list it is given stays empty. */
    private static final List<Object> NO_OUTPUT = List.of();

    /** Receive states (see the class comment). */
    enum RecvState { HEADER, H2C_DATA, H2C_DIGEST, ERROR }

    private final TcpQueue queue;
    private final TcpTransportConfig config;
    private final IoObserver observer;
    private final CRC32C crc = new CRC32C();
    /** The data digest of the H2CData being received (its data may arrive across reads, with sends between). */
    private final CRC32C rxCrc = new CRC32C();

    private ChannelHandlerContext ctx;
    private TcpPduWriter writer;
    private RecvState state = RecvState.HEADER;
    private boolean hdgst;
    private boolean ddgst;
    private String peer = "?";

    /** Reading stopped because the channel is not writable; {@link #resumeReading()} undoes it. */
    private boolean readPaused;
    /** Inside {@link #decode}: writability events only take note, the decode loop acts on them. */
    private boolean decoding;
    /** The first exception that ended the connection, logged once when it is closed. */
    private Throwable failure;
    private int laterFailures;

    /** In H2C_DATA and H2C_DIGEST: the request whose H2CData PDU is being received. */
    private TcpRequest rxReq;
    /** Where the next data byte of the current H2CData PDU goes in the request's buffer. */
    private int rxOffset;
    /** Data bytes of the current H2CData PDU still to come. */
    private int rxDataLeft;
    /** The current H2CData PDU's data length. */
    private int rxDataLength;
    /** The buffer last handed to the socket by {@link #inPlaceTarget()} (identifies its read), else null. */
    private ByteBuf inPlace;
    /** The buffer last handed to the socket by {@link #carryTarget} (identifies its read), else null. */
    private ByteBuf carried;
    /** When the bytes being decoded were read from the socket: the arrival time of their commands. */
    private long readNanos;

    TcpPduReader(TcpQueue queue, TcpTransportConfig config, IoObserver observer) {
        this.queue = queue;
        this.config = config;
        this.observer = observer;
        setCumulator(this::cumulate);
    }

    /** The queue whose PDUs this reader frames. */
    TcpQueue queue() {
        return queue;
    }

    /** The first exception that ended the connection, or null (for the parser fuzzer). */
    Throwable failure() {
        return failure;
    }

    // ---------------------------------------------------------------- channel events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.peer = TcpQueue.hostPort(ctx.channel().remoteAddress());
        this.writer = new TcpPduWriter(ctx, queue::stagedQueued);
        queue.attach(writer, peer);
        observer.connectionOpened(TcpQueue.TRANSPORT);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        queue.opened();
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        readNanos = System.nanoTime();
        writer.batching(true);
        try {
            if (msg == inPlace && msg != null) {
                readInPlace((ByteBuf) msg);
                return;
            }
            super.channelRead(ctx, msg);
        } finally {
            writer.batching(false);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        queue.flushBatch();
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
            queue.reapWritten();
            if (readPaused && !decoding) {
                resumeReading();
            }
        }
        super.channelWritabilityChanged(ctx);
    }

    /** The channel is not writable: decode nothing more and stop reading the socket until it drains. */
    private void pauseReading() {
        if (!readPaused) {
            readPaused = true;
            ctx.channel().config().setAutoRead(false);
            LOG.debug("queue {} from {}: outbound buffer full; reading paused", queue.qid(), peer);
        }
    }

    /** Writable again: decodes the PDUs already buffered, then reads the socket again (unless paused anew). */
    private void resumeReading() {
        readPaused = false;
        ByteBuf buffered = internalBuffer();
        if (buffered.isReadable()) {
            readNanos = System.nanoTime();
            writer.batching(true);
            try {
                decode(ctx, buffered, NO_OUTPUT);
            } finally {
                writer.batching(false);
            }
            queue.flushBatch();
        }
        if (!readPaused && ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        state = RecvState.ERROR;
        rxReq = null;
        inPlace = null;
        observer.connectionClosed(TcpQueue.TRANSPORT);
        if (failure != null) {
            LOG.warn("queue {} from {}: {}; connection closed{}", queue.qid(), peer, failure.toString(),
                laterFailures > 0 ? " (" + laterFailures + " more errors while closing, e.g. pending writes)" : "");
        }
        queue.closed();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        FatalErrors.raise(cause); // an Error (out of memory) stops the process; the connection closes as for any failure
        // One line per failed connection, written when it is closed: closing fails every pending write,
        // and each failure comes here (thousands for a host that stopped reading).
        if (failure == null && queue.phase() != TcpQueue.Phase.CLOSED) {
            failure = cause;
        } else {
            laterFailures++;
            LOG.debug("queue {} from {}: further error: {}", queue.qid(), peer, cause.toString());
        }
        ctx.close();
    }

    // ---------------------------------------------------------------- receive states

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
        queue.reapWritten();
        while (in.isReadable()) {
            if (ended(in)) {
                return;
            }
            switch (state) {
                case ERROR -> {
                    in.skipBytes(in.readableBytes());
                    return;
                }
                case H2C_DATA -> {
                    if (!receiveH2cData(in)) {
                        return;
                    }
                }
                case H2C_DIGEST -> {
                    if (!receiveH2cDigest(in)) {
                        return;
                    }
                }
                case HEADER -> {
                    if (!ctx.channel().isWritable()) {
                        queue.flushBatch();
                        if (!ctx.channel().isWritable()) {
                            pauseReading();
                            return;
                        }
                    }
                    if (!receivePdu(in)) {
                        return;
                    }
                }
            }
        }
    }

    /** Whether the queue no longer receives (the connection is ending): then the rest is dropped (ERROR). */
    private boolean ended(ByteBuf in) {
        if (queue.receiving()) {
            return false;
        }
        state = RecvState.ERROR;
        in.skipBytes(in.readableBytes());
        return true;
    }

    /**
     * HEADER: takes the next PDU (or, for an H2CData with data, its header) if it is all here; false when
     * more bytes are needed or the connection is ending.
     */
    private boolean receivePdu(ByteBuf in) {
        if (in.readableBytes() < CH_SIZE) {
            return false;
        }
        int idx = in.readerIndex();
        int type = in.getUnsignedByte(idx + TYPE);
        int flags = in.getUnsignedByte(idx + FLAGS);
        int hlen = in.getUnsignedByte(idx + HLEN);
        int pdo = in.getUnsignedByte(idx + PDO);
        long plen = in.getUnsignedIntLE(idx + PLEN);
        int error = checkCommonHeader(type, flags, hlen, pdo, plen);
        if (error >= 0) {
            queue.terminate(error >>> 16, error & 0xFFFF, in, idx);
            ended(in);
            return false;
        }
        int len = (int) plen;
        int hd = hdgst ? DIGEST_SIZE : 0;
        int dd = ddgst ? DIGEST_SIZE : 0;
        if (type == H2C_DATA && len > hlen + hd) {
            // H2CData carrying data (checkCommonHeader: PDO past the header): only its header is awaited;
            // the data is then taken as it arrives, straight into the request's buffer (H2C_DATA)
            if (in.readableBytes() < pdo) {
                return false;
            }
            if (hdgst && !headerDigestOk(in, idx, hlen)) {
                queue.terminate(FES_HEADER_DIGEST_ERROR, 0, in, idx);
                ended(in);
                return false;
            }
            int dataLen = len - pdo - dd;
            TcpRequest req = queue.onH2cDataHeader(in, idx, flags, dataLen);
            if (req == null) {
                ended(in); // terminated
                return false;
            }
            rxReq = req;
            rxOffset = in.getIntLE(idx + DATA_DATAO); // checked by the queue: within the request's buffer
            rxDataLeft = dataLen;
            rxDataLength = dataLen;
            if (ddgst) {
                rxCrc.reset();
            }
            state = RecvState.H2C_DATA;
            in.readerIndex(idx + pdo);
            return true;
        }
        if (in.readableBytes() < plen) {
            return false;
        }
        if (type == ICREQ) {
            onIcReq(in, idx);
        } else if (type == H2C_TERM_REQ) {
            queue.onHostTermReq(in.getUnsignedShortLE(idx + TERM_FES));
        } else if (hdgst && !headerDigestOk(in, idx, hlen)) {
            queue.terminate(FES_HEADER_DIGEST_ERROR, 0, in, idx);
        } else if (type == CAPSULE_CMD) {
            int dataLen = len > hlen + hd ? len - pdo - dd : 0;
            boolean digestOk = dataLen == 0 || !ddgst
                || crc32c(crc, in, idx + pdo, dataLen) == in.getIntLE(idx + len - DIGEST_SIZE);
            queue.onCapsuleCmd(in, idx, pdo, dataLen, digestOk, readNanos);
        } else {
            queue.onH2cDataHeader(in, idx, flags, 0); // no data: refused (DATAL), after the checks of TTAG and CCCID
        }
        if (ended(in)) {
            return false;
        }
        in.readerIndex(idx + len);
        return true;
    }

    /**
     * H2C_DATA: copies what {@code in} holds of the current H2CData PDU's data into the request's buffer at
     * its offset; true once the data is complete (the state moved on), false when more bytes are needed.
     */
    private boolean receiveH2cData(ByteBuf in) {
        int n = Math.min(in.readableBytes(), rxDataLeft);
        if (n > 0) {
            int from = in.readerIndex();
            rxReq.data.setBytes(rxOffset, in, from, n);
            in.skipBytes(n);
            received(in, from, n);
        }
        return rxDataLeft == 0;
    }

    /** H2C_DIGEST: the PDU's data digest; true once checked and the PDU finished. */
    private boolean receiveH2cDigest(ByteBuf in) {
        if (in.readableBytes() < DIGEST_SIZE) {
            return false;
        }
        finishH2cData(in.readIntLE() == (int) rxCrc.getValue());
        return true;
    }

    /** {@code n} bytes of the current H2CData PDU's data are in the request's buffer ({@code buf} holds them too). */
    private void received(ByteBuf buf, int index, int n) {
        if (ddgst) {
            TcpPdu.update(rxCrc, buf, index, n);
        }
        rxOffset += n;
        rxDataLeft -= n;
        if (rxDataLeft == 0) {
            if (ddgst) {
                state = RecvState.H2C_DIGEST;
            } else {
                finishH2cData(true);
            }
        }
    }

    /** The current H2CData PDU is whole: the queue is told, and the next PDU is awaited. */
    private void finishH2cData(boolean digestOk) {
        TcpRequest req = rxReq;
        rxReq = null;
        state = RecvState.HEADER;
        queue.onH2cData(req, rxDataLength, digestOk);
    }

    /**
     * The slice of the current request's buffer the socket may read H2CData straight into, or null: only
     * while the data of an H2CData PDU is awaited, nothing else of the stream is buffered (the socket's next
     * bytes are that data), the queue reads the socket itself (no handler such as TLS in front of it), and
     * enough is left for the saved copy to matter.
     */
    ByteBuf inPlaceTarget() {
        if (state != RecvState.H2C_DATA || rxDataLeft < IN_PLACE_MIN || queue.phase() != TcpQueue.Phase.READY
            || readPaused || internalBuffer().isReadable() || ctx.pipeline().first() != this) {
            return null;
        }
        inPlace = rxReq.data.retainedSlice(rxOffset, rxDataLeft).clear();
        return inPlace;
    }

    /**
     * How many bytes the next socket read should take, or 0 for the usual receive buffer: at a PDU boundary with
     * nothing buffered, while a write of {@link TcpQueue#HEADER_READ_MIN_DATA} bytes or more awaits its H2CData, an
     * H2CData header (and its digest). The PDU's data then goes to {@link #inPlaceTarget()} whole; read with the
     * header into a receive buffer, as much of it as the buffer held would be copied into the request once more,
     * a copy of up to 64 KiB per H2CData (docs/benchmarks-history.md, "A large write's H2CData"). A capsule that comes
     * instead is read on by {@link #carryTarget}.
     */
    int headerReadSize() {
        if (state != RecvState.HEADER || queue.phase() != TcpQueue.Phase.READY || readPaused
            || queue.awaitingLargeH2c() == 0 || internalBuffer().isReadable() || ctx.pipeline().first() != this) {
            return 0;
        }
        return DATA_HLEN + (hdgst ? DIGEST_SIZE : 0);
    }

    /**
     * A receive buffer that starts with the unread bytes of the cumulation (the start of a PDU that a read cut
     * off), with room for {@code guess} more after them, or null when there are none. The socket appends to
     * them, and {@link #cumulate} then takes the buffer as the new cumulation: only the cut-off bytes are copied,
     * where Netty's cumulator would copy everything the socket read after them (and a cumulation that in-capsule
     * data slices share is copied whole into a new one).
     */
    ByteBuf carryTarget(ByteBufAllocator alloc, int guess) {
        carried = null;
        ByteBuf cumulation = internalBuffer();
        int tail = cumulation.readableBytes();
        if (tail == 0 || tail > CARRY_MAX || readPaused || state == RecvState.ERROR
            || queue.phase() == TcpQueue.Phase.CLOSED || ctx.pipeline().first() != this) {
            return null;
        }
        ByteBuf b = alloc.ioBuffer(tail + guess);
        b.writeBytes(cumulation, cumulation.readerIndex(), tail);
        carried = b;
        return b;
    }

    /** Netty's cumulator, except for a read into {@link #carryTarget}, which holds the old cumulation's unread bytes. */
    private ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        if (in == carried && in != null) {
            carried = null;
            TcpQueue.CARRIED_READS.incrementAndGet();
            cumulation.release(); // its unread bytes are at the start of in; slices of it keep their own references
            return in;
        }
        return MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
    }

    /** A read into {@link #inPlaceTarget()}: the data is where it belongs already; counts it. */
    private void readInPlace(ByteBuf buf) {
        inPlace = null;
        try {
            if (state == RecvState.H2C_DATA && queue.phase() == TcpQueue.Phase.READY && buf.isReadable()) {
                TcpQueue.IN_PLACE_READS.incrementAndGet();
                received(buf, buf.readerIndex(), buf.readableBytes());
            } // a digest then comes through the decoder, which finishes the PDU
        } finally {
            buf.release();
        }
    }

    // ---------------------------------------------------------------- checks

    /** Checks the common header; returns -1 when valid, else FES << 16 | FEI. */
    private int checkCommonHeader(int type, int flags, int hlen, int pdo, long plen) {
        if ((queue.phase() == TcpQueue.Phase.AWAIT_ICREQ) != (type == ICREQ)) {
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
                dataLimit = queue.inCapsuleDataLimit();
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
        return crc32c(crc, in, idx, hlen) == in.getIntLE(idx + hlen);
    }

    /** An ICReq whose fields hold: the queue answers it, and the digests it asks for frame every later PDU. */
    private void onIcReq(ByteBuf in, int idx) {
        int pfv = in.getUnsignedShortLE(idx + IC_PFV);
        int requestedHpda = in.getUnsignedByte(idx + IC_HPDA);
        int dgst = in.getUnsignedByte(idx + IC_DGST);
        if (pfv != 0) {
            queue.terminate(FES_UNSUPPORTED_PARAMETER, IC_PFV, in, idx);
            return;
        }
        if (requestedHpda > 31) {
            queue.terminate(FES_INVALID_HEADER_FIELD, IC_HPDA, in, idx);
            return;
        }
        hdgst = (dgst & 0x1) != 0;
        ddgst = (dgst & 0x2) != 0;
        queue.onIcReq(dgst, requestedHpda);
    }
}
