package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.nvmf4j.nvme.Cqe;

import java.util.concurrent.ScheduledExecutorService;
import java.util.zip.CRC32C;

import static io.nvmf4j.transport.tcp.TcpPdu.*;

/**
 * The send side of one NVMe/TCP connection, its queue's {@link TcpQueue.Wire} on the Netty channel: builds the
 * PDUs the controller sends (ICResp, CapsuleResp, R2T, C2HData, C2HTermReq) and queues them on the channel,
 * counting what it queued, and closes the channel.
 *
 * <p>Headers and data digests of consecutive PDUs are staged in one pooled buffer ({@link #stage}); what is
 * staged is handed to the channel as one write (a slice of the staging buffer) when data from elsewhere must
 * follow (a C2HData's payload is the request's own buffer) and at every flush, and the next headers are staged
 * after it in the same buffer until it is full. So a pooled buffer serves many batches of responses, not one
 * PDU or one batch. While a read batch is processed ({@link #batching}) flushes are deferred to its end.
 *
 * <p>{@link #queuedBytes()} is how many bytes the channel's outbound buffer counted for everything queued
 * here, and {@link #takenBytes()} how many of them the socket has taken: the queue compares a response's end
 * with it to learn which responses are written (see {@link TcpQueue#reapWritten()}).
 */
final class TcpPduWriter implements TcpQueue.Wire {
    /** Data per C2HData PDU. */
    static final int C2H_CHUNK = 128 * 1024;
    /** The staging buffer's size: a batch of 4 KiB reads' headers at queue depth 128 (32 + 24 bytes each). */
    private static final int STAGE_SIZE = 8192;
    /** The most padding a C2HData header takes (HPDA 31: 128-byte alignment). */
    private static final int MAX_PAD = 128;

    /** Told when staged bytes are handed to the channel, with the count they end at. */
    @FunctionalInterface
    interface StagedListener {
        void stagedQueued(long queuedBytes);
    }

    private final ChannelHandlerContext ctx;
    private final StagedListener listener;
    private final CRC32C crc = new CRC32C();
    private boolean hdgst;
    private boolean ddgst;
    private int hpda;
    /** The staging buffer of PDU headers (and digests), or null; see {@link #stage}. */
    private ByteBuf tx;
    /** Where the bytes of {@link #tx} not yet handed to the channel start (they end at its writer index). */
    private int txStart;
    /** Bytes handed to the channel so far, as its outbound buffer counts them (entry overhead included). */
    private long queuedBytes;
    private boolean batching;
    private boolean flushPending;

    TcpPduWriter(ChannelHandlerContext ctx, StagedListener listener) {
        this.ctx = ctx;
        this.listener = listener;
    }

    @Override
    public ByteBufAllocator alloc() {
        return ctx.alloc();
    }

    @Override
    public ScheduledExecutorService executor() {
        return ctx.executor();
    }

    @Override
    public boolean inExecutor() {
        return ctx.executor().inEventLoop();
    }

    @Override
    public boolean isOpen() {
        return ctx.channel().isOpen();
    }

    @Override
    public void negotiated(boolean hdgst, boolean ddgst, int hpda) {
        this.hdgst = hdgst;
        this.ddgst = ddgst;
        this.hpda = hpda;
    }

    @Override
    public boolean staging() {
        return tx != null && tx.writerIndex() > txStart;
    }

    @Override
    public long queuedBytes() {
        return queuedBytes;
    }

    /**
     * How many of {@link #queuedBytes()} the socket has taken, -1 once the channel is closed. The outbound buffer
     * subtracts an entry's size only when the entry is fully written (or failed at close), and {@link #queue} counted
     * what each write added to its {@link ChannelOutboundBuffer#totalPendingWriteBytes()} (measured before and after,
     * so Netty's per-entry overhead is included whatever it is configured to): the difference is the bytes of our
     * stream the socket has taken. A handler in front of the reader (TLS) copies what it is given before it returns
     * (into its records), so what it was handed needs nothing of its request any more; what waits is its
     * ciphertext, which the channel's writability bounds: everything counts as taken then.
     */
    @Override
    public long takenBytes() {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        if (out == null) {
            return -1;
        }
        return ctx.pipeline().first() != ctx.handler() ? Long.MAX_VALUE - 1
            : queuedBytes - out.totalPendingWriteBytes();
    }

    // ---------------------------------------------------------------- PDUs

    @Override
    public void icResp(int dgst, int maxH2cData) {
        ByteBuf resp = ctx.alloc().directBuffer(IC_SIZE);
        resp.writeZero(IC_SIZE);
        resp.setByte(TYPE, ICRESP);
        resp.setByte(HLEN, IC_SIZE);
        resp.setIntLE(PLEN, IC_SIZE);
        resp.setShortLE(IC_PFV, 0);
        resp.setByte(IC_CPDA, CPDA);
        resp.setByte(IC_DGST, dgst & 0x3);
        resp.setIntLE(IC_MAXH2CDATA, maxH2cData);
        write(resp);
    }

    @Override
    public void capsuleResp(int dw0, int dw1, int sqhd, int sqid, int cid, int status) {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int at = header(CAPSULE_RESP, 0, RESP_HLEN, 0, RESP_HLEN + hd);
        Cqe.write(tx, at + CH_SIZE, dw0, dw1, sqhd, sqid, cid, status);
        sealHeader(at, RESP_HLEN);
    }

    @Override
    public void r2t(int cid, int ttag, int length) {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int at = header(R2T, 0, DATA_HLEN, 0, DATA_HLEN + hd);
        ByteBuf b = tx;
        b.setShortLE(at + DATA_CCCID, cid);
        b.setShortLE(at + DATA_TTAG, ttag);
        b.setIntLE(at + DATA_DATAO, 0);
        b.setIntLE(at + DATA_DATAL, length);
        sealHeader(at, DATA_HLEN);
    }

    /**
     * The read data of command {@code cid}: C2HData PDUs of up to {@link #C2H_CHUNK} bytes, each header staged
     * and the data written as a slice of {@code data} itself; the last with SUCCESS when {@code successFlag}.
     */
    @Override
    public void c2hData(int cid, ByteBuf data, int length, boolean successFlag) {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int dd = ddgst ? DIGEST_SIZE : 0;
        int pdo = frameHead();
        int pad = pdo - DATA_HLEN - hd;
        for (int off = 0; off < length; off += C2H_CHUNK) {
            int len = Math.min(C2H_CHUNK, length - off);
            boolean last = off + len == length;
            int flags = (ddgst ? FLAG_DDGST : 0) | (last ? FLAG_LAST_PDU : 0) | (last && successFlag ? FLAG_SUCCESS : 0);
            int at = header(C2H_DATA, flags, DATA_HLEN, pdo, pdo + len + dd);
            ByteBuf b = tx;
            b.setShortLE(at + DATA_CCCID, cid);
            b.setIntLE(at + DATA_DATAO, off);
            b.setIntLE(at + DATA_DATAL, len);
            sealHeader(at, DATA_HLEN);
            if (pad > 0) {
                b.writeZero(pad);
            }
            // the device's buffer itself, after the staged headers: the whole buffer when one PDU carries it all
            write(off == 0 && len == data.capacity() ? data.retain().setIndex(0, len) : data.retainedSlice(off, len));
            if (ddgst) {
                stage(DIGEST_SIZE).writeIntLE(crc32c(crc, data, off, len));
            }
        }
    }

    /** Bytes a read's frame holds before its data: the C2HData header, its digest and the padding (HPDA). */
    @Override
    public int frameHead() {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int align = (hpda + 1) * 4;
        return ((DATA_HLEN + hd + align - 1) / align) * align;
    }

    /** Bytes a read's frame holds after its data: the data digest and a CapsuleResp with its digest. */
    @Override
    public int frameTail() {
        return (ddgst ? DIGEST_SIZE : 0) + RESP_HLEN + (hdgst ? DIGEST_SIZE : 0);
    }

    /**
     * The response of a read whose data, {@code length} bytes, sits in {@code frame} at {@code start} plus
     * {@link #frameHead()}, with {@link #frameTail()} bytes of room after it: the C2HData header, the data digest and,
     * unless {@code successFlag}, the CapsuleResp are written around the data and the frame goes to the channel as
     * one buffer (after what is staged), so a 4 KiB read is one write, not a staged header, the data and a staged
     * CapsuleResp. {@code length} is at most {@link #C2H_CHUNK}: one C2HData PDU.
     */
    @Override
    public void c2hFrame(ByteBuf frame, int start, int length, boolean successFlag, int dw0, int dw1, int sqhd, int sqid,
                  int cid, int status) {
        int hd = hdgst ? DIGEST_SIZE : 0;
        int dd = ddgst ? DIGEST_SIZE : 0;
        int pdo = frameHead();
        int flags = (ddgst ? FLAG_DDGST : 0) | FLAG_LAST_PDU | (successFlag ? FLAG_SUCCESS : 0);
        frame.setZero(start + DATA_HLEN, pdo - DATA_HLEN); // the header digest's place and the padding
        commonHeader(frame, start, C2H_DATA, flags, DATA_HLEN, pdo, pdo + length + dd);
        frame.setShortLE(start + DATA_CCCID, cid);
        frame.setIntLE(start + DATA_DATAL, length);
        if (hdgst) {
            frame.setIntLE(start + DATA_HLEN, crc32c(crc, frame, start, DATA_HLEN));
        }
        int end = start + pdo + length;
        if (ddgst) {
            frame.setIntLE(end, crc32c(crc, frame, start + pdo, length));
            end += DIGEST_SIZE;
        }
        if (!successFlag) {
            commonHeader(frame, end, CAPSULE_RESP, 0, RESP_HLEN, 0, RESP_HLEN + hd);
            Cqe.write(frame, end + CH_SIZE, dw0, dw1, sqhd, sqid, cid, status);
            if (hdgst) {
                frame.setIntLE(end + RESP_HLEN, crc32c(crc, frame, end, RESP_HLEN));
            }
            end += RESP_HLEN + hd;
        }
        write(frame.retain().setIndex(start, end));
    }

    /**
     * A C2HTermReq carrying FES, FEI and up to {@link TcpPdu#TERM_MAX_DATA} bytes of the offending PDU from
     * {@code idx} of {@code in}, after everything staged; the channel is closed once it is written.
     */
    @Override
    public void termReq(int fes, int fei, ByteBuf in, int idx) {
        int available = Math.min(in.writerIndex() - idx, TERM_MAX_DATA);
        int hlen = in.writerIndex() - idx > HLEN ? in.getUnsignedByte(idx + HLEN) : CH_SIZE;
        int errLen = Math.max(0, Math.min(available, Math.max(hlen, CH_SIZE)));
        ByteBuf b = ctx.alloc().directBuffer(TERM_HLEN + errLen);
        b.writeZero(TERM_HLEN);
        b.setByte(TYPE, C2H_TERM_REQ);
        b.setByte(HLEN, TERM_HLEN);
        b.setIntLE(PLEN, TERM_HLEN + errLen);
        b.setShortLE(TERM_FES, fes);
        b.setIntLE(TERM_FEI, fei);
        b.writeBytes(in, idx, errLen);
        writeStaged(); // what was answered before goes first
        ctx.writeAndFlush(b).addListener(f -> ctx.close());
    }

    @Override
    public void close(boolean flushFirst) {
        if (!flushFirst) {
            ctx.close();
            return;
        }
        writeStaged();
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> ctx.close());
    }

    /**
     * Starts a PDU header of {@code hlen} bytes in the staging buffer and returns its index there. Headers
     * (and data digests) of consecutive PDUs are gathered in one buffer, handed to the channel as one write
     * when data from elsewhere must follow or at the flush (see {@link #stage}).
     */
    private int header(int type, int flags, int hlen, int pdo, int plen) {
        ByteBuf b = stage(hlen + DIGEST_SIZE + MAX_PAD);
        int at = b.writerIndex();
        b.writerIndex(at + hlen);
        commonHeader(b, at, type, flags, hlen, pdo, plen);
        return at;
    }

    /**
     * A PDU header of {@code hlen} bytes at {@code at} of {@code b}: zeroed, then the common header (HDGSTF added
     * when header digests are on); the caller fills in the PDU-specific fields.
     */
    private void commonHeader(ByteBuf b, int at, int type, int flags, int hlen, int pdo, int plen) {
        b.setZero(at, hlen);
        b.setByte(at + TYPE, type);
        b.setByte(at + FLAGS, flags | (hdgst ? FLAG_HDGST : 0));
        b.setByte(at + HLEN, hlen);
        b.setByte(at + PDO, pdo);
        b.setIntLE(at + PLEN, plen);
    }

    private void sealHeader(int at, int hlen) {
        if (hdgst) {
            tx.writeIntLE(crc32c(crc, tx, at, hlen));
        }
    }

    // ---------------------------------------------------------------- staging, queueing, flushing

    /**
     * The staging buffer with room for {@code bytes} more: the one being filled, or a new one once it is full
     * (what it staged is handed to the channel first; the slices the channel holds keep it until written).
     */
    private ByteBuf stage(int bytes) {
        ByteBuf b = tx;
        if (b != null && b.writableBytes() >= bytes) {
            return b;
        }
        writeStaged();
        if (b != null) {
            b.release(); // ours; the channel's slices of it hold their own references
        }
        b = tx = ctx.alloc().directBuffer(STAGE_SIZE);
        txStart = 0;
        return b;
    }

    /**
     * Hands the staged PDUs to the channel as a slice of the staging buffer (before anything else is written,
     * and at every flush); the buffer goes on staging after them.
     */
    void writeStaged() {
        ByteBuf b = tx;
        if (b == null) {
            return;
        }
        int end = b.writerIndex();
        if (end == txStart) {
            return;
        }
        ByteBuf staged = b.retainedSlice(txStart, end - txStart);
        txStart = end;
        queue(staged);
        listener.stagedQueued(queuedBytes);
    }

    /** Queues {@code b} on the channel after what is staged (see {@link #stage}). */
    private void write(ByteBuf b) {
        writeStaged();
        queue(b);
    }

    /** Queues {@code b} on the channel and counts what it added to the outbound buffer. */
    private void queue(ByteBuf b) {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        long before = out != null ? out.totalPendingWriteBytes() : 0;
        ctx.write(b, ctx.voidPromise());
        if (out != null) {
            queuedBytes += out.totalPendingWriteBytes() - before;
        }
    }

    /** A read batch starts ({@code true}: flushes wait for its end) or ends. */
    void batching(boolean on) {
        batching = on;
    }

    @Override
    public boolean batching() {
        return batching;
    }

    @Override
    public boolean flushUnlessBatching() {
        if (batching) {
            flushPending = true;
            return false;
        }
        flush();
        return true;
    }

    @Override
    public boolean flushBatch() {
        if (!flushPending) {
            return false;
        }
        flushPending = false;
        flush();
        return true;
    }

    void flush() {
        writeStaged();
        ctx.flush();
    }

    /** The connection closed: what is staged goes back to the pool. */
    @Override
    public void release() {
        if (tx != null) {
            tx.release();
            tx = null;
        }
    }
}
