package io.nvmf4j.testhost;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One NVMe/TCP connection, that is one queue, seen from the host.
 *
 * <p>Threads: the caller's threads submit and send (PDU writes are serialised by {@code sendLock});
 * one reader thread owns the input stream and completes commands; one sender thread answers R2Ts
 * with H2CData so the reader never blocks on a write.
 *
 * <p>Raw mode: any PDU the reader cannot match to a command submitted here (ICResp, TermReq, the
 * answers to commands sent with {@link #sendRaw}) goes to an inbox that {@link #readPdu} drains.
 * Raw commands should use CIDs at or above {@link #RAW_CID_BASE}; {@link #submit} never does.
 */
public final class TcpHost implements AutoCloseable {
    public static final int RAW_CID_BASE = 0x8000;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final TcpHostOptions options;
    private final Object sendLock = new Object();
    private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
    private final BlockingQueue<Pdu> inbox = new LinkedBlockingQueue<>();
    private final List<String> protocolErrors = new CopyOnWriteArrayList<>();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final ExecutorService h2cSender;
    private final AtomicInteger nextCid = new AtomicInteger();
    private final AtomicLong r2tCount = new AtomicLong();
    private final AtomicLong c2hDataCount = new AtomicLong();
    private final AtomicLong capsuleRespCount = new AtomicLong();
    private volatile IcResp icResp;
    private volatile TermReq termReq;
    /** While set, the reader thread reads nothing more: the socket's receive buffer fills up. */
    private volatile CountDownLatch readGate = new CountDownLatch(0);

    /** A submitted command waiting for its completion. Only the reader thread touches {@code received}. */
    private static final class Pending {
        final int cid;
        final byte[] writeData;
        final byte[] readBuffer;
        final CompletableFuture<Completion> future = new CompletableFuture<>();
        int received;

        Pending(int cid, byte[] writeData, int readLength) {
            this.cid = cid;
            this.writeData = writeData;
            this.readBuffer = readLength > 0 ? new byte[readLength] : null;
        }
    }

    private TcpHost(Socket socket, TcpHostOptions options) throws IOException {
        this.socket = socket;
        this.options = options;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 256 * 1024));
        this.out = socket.getOutputStream();
        String name = "tcphost-" + socket.getLocalPort();
        this.h2cSender = Executors.newSingleThreadExecutor(r -> daemon(r, name + "-h2c"));
        daemon(this::readLoop, name + "-reader").start();
    }

    /** Opens the TCP connection and starts the reader, without sending ICReq. */
    public static TcpHost open(String host, int port, TcpHostOptions options) throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(host, port), (int) options.timeout().toMillis());
        return new TcpHost(s, options);
    }

    /** Opens the connection and exchanges ICReq/ICResp (PFV 0, the options' HPDA, MAXR2T 0). */
    public static TcpHost connect(String host, int port, TcpHostOptions options) throws IOException {
        TcpHost h = open(host, port, options);
        try {
            h.handshake();
            return h;
        } catch (IOException | RuntimeException e) {
            h.close();
            throw e;
        }
    }

    /** Sends ICReq with the digests from the options and waits for ICResp. */
    public IcResp handshake() throws IOException {
        sendRaw(icReq(0, options.hpda(), options.headerDigest(), options.dataDigest()));
        Pdu p = readPdu(options.timeout());
        if (p.type() != Pdu.IC_RESP) {
            throw new ProtocolException("expected ICResp, got " + p + (termReq != null ? " " + termReq : ""));
        }
        icResp = IcResp.of(p);
        return icResp;
    }

    /** A 128-byte ICReq: PFV u16 at 8, HPDA 0 at 10, DGST at 11, MAXR2T 0 at 12. */
    public static byte[] icReq(int pfv, boolean headerDigest, boolean dataDigest) {
        return icReq(pfv, 0, headerDigest, dataDigest);
    }

    /** A 128-byte ICReq: PFV u16 at 8, HPDA at 10, DGST at 11, MAXR2T 0 at 12. */
    public static byte[] icReq(int pfv, int hpda, boolean headerDigest, boolean dataDigest) {
        ByteBuffer psh = ByteBuffer.allocate(120).order(ByteOrder.LITTLE_ENDIAN);
        psh.putShort(0, (short) pfv).put(2, (byte) hpda).put(3, (byte) ((headerDigest ? 1 : 0) | (dataDigest ? 2 : 0)));
        return PduCodec.encode(Pdu.IC_REQ, 0, psh.array(), null, false, false);
    }

    /**
     * Submits a command. Write data up to the in-capsule size goes in-capsule (SGL 0x01); larger
     * writes and all reads get a transport SGL (0x5A) for the R2T/H2CData and C2HData flows.
     */
    public CompletableFuture<Completion> submit(Sqe sqe, byte[] writeData, int readLength) {
        Sqe cmd = sqe.copy();
        boolean inCapsule = writeData != null && writeData.length > 0 && writeData.length <= options.inCapsuleDataSize();
        if (inCapsule) {
            cmd.sgl(Sqe.SGL_IN_CAPSULE, 0, writeData.length);
        } else {
            cmd.sgl(Sqe.SGL_TRANSPORT, 0, writeData != null ? writeData.length : readLength);
        }
        return send(cmd, inCapsule ? writeData : null, inCapsule ? null : writeData, readLength);
    }

    /** Submits the SQE as given (only the CID is set) with these in-capsule bytes, for bad-input tests. */
    public CompletableFuture<Completion> submitAsIs(Sqe sqe, byte[] inCapsuleData, int readLength) {
        return send(sqe.copy(), inCapsuleData, null, readLength);
    }

    private CompletableFuture<Completion> send(Sqe cmd, byte[] inCapsule, byte[] r2tData, int readLength) {
        Pending p = register(r2tData, readLength);
        cmd.cid(p.cid);
        try {
            sendRaw(encodeCapsule(cmd, inCapsule));
        } catch (IOException e) {
            pending.remove(p.cid);
            p.future.completeExceptionally(e);
        }
        return p.future;
    }

    private Pending register(byte[] writeData, int readLength) {
        while (true) {
            int cid = nextCid.getAndIncrement() & (RAW_CID_BASE - 1);
            Pending p = new Pending(cid, writeData, readLength);
            if (pending.putIfAbsent(cid, p) == null) {
                if (isClosed()) {
                    pending.remove(cid);
                    p.future.completeExceptionally(new EOFException("connection closed" + describeTermReq()));
                }
                return p;
            }
        }
    }

    /** A CapsuleCmd with the digests negotiated so far (none before ICResp). */
    public byte[] encodeCapsule(Sqe sqe, byte[] inCapsuleData) {
        IcResp ic = icResp;
        return PduCodec.encode(Pdu.CAPSULE_CMD, 0, sqe.toBytes(), inCapsuleData,
                ic != null && ic.headerDigest(), ic != null && ic.dataDigest());
    }

    /** An H2CData PDU: CCCID u16 at 8, TTAG u16 at 10, DATAO u32 at 12, DATAL u32 at 16. */
    public byte[] encodeH2cData(int cccid, int ttag, long datao, byte[] data, boolean last) {
        ByteBuffer psh = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        psh.putShort((short) cccid).putShort((short) ttag).putInt((int) datao).putInt(data.length);
        IcResp ic = icResp;
        return PduCodec.encode(Pdu.H2C_DATA, last ? Pdu.FLAG_LAST_PDU : 0, psh.array(), data,
                ic != null && ic.headerDigest(), ic != null && ic.dataDigest());
    }

    /** Writes bytes as they are; whole PDUs from concurrent senders never interleave. */
    public void sendRaw(byte[] bytes) throws IOException {
        synchronized (sendLock) {
            out.write(bytes);
            out.flush();
        }
    }

    /**
     * The next PDU not matched to a submitted command. Throws {@link EOFException} once the peer
     * closed and nothing is left, {@link SocketTimeoutException} when nothing came in time.
     */
    public Pdu readPdu(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                Pdu p = inbox.poll(20, TimeUnit.MILLISECONDS);
                if (p != null) {
                    return p;
                }
                if (isClosed() && inbox.isEmpty()) {
                    throw new EOFException("connection closed by peer" + describeTermReq());
                }
                if (System.nanoTime() > deadline) {
                    throw new SocketTimeoutException("no PDU within " + timeout);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** Waits until the peer closed the connection (EOF or reset); false on timeout. */
    public boolean awaitClosed(Duration timeout) throws InterruptedException {
        return closed.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public boolean isClosed() {
        return closed.getCount() == 0;
    }

    public IcResp icResp() {
        return icResp;
    }

    /** The TermReq the controller sent, or null. */
    public TermReq termReq() {
        return termReq;
    }

    /** Violations seen on receive (bad digests, unexpected offsets); empty on a healthy queue. */
    public List<String> protocolErrors() {
        return List.copyOf(protocolErrors);
    }

    public long r2tCount() {
        return r2tCount.get();
    }

    public long c2hDataCount() {
        return c2hDataCount.get();
    }

    public long capsuleRespCount() {
        return capsuleRespCount.get();
    }

    public TcpHostOptions options() {
        return options;
    }

    /**
     * Stops reading the socket (after the PDU being read, if any), as a host that never reads would:
     * the target's responses pile up in the socket buffers and then in the target.
     */
    public void pauseReading() {
        if (readGate.getCount() == 0) {
            readGate = new CountDownLatch(1);
        }
    }

    /** Reads again after {@link #pauseReading()}. */
    public void resumeReading() {
        readGate.countDown();
    }

    /** Closes with a TCP reset (SO_LINGER 0) instead of a FIN, as a crashed host's kernel would. */
    public void abort() {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException ignored) {
            // closing anyway
        }
        close();
    }

    /** The local port of this connection: the target logs the host as {@code /127.0.0.1:<port>}. */
    public int localPort() {
        return socket.getLocalPort();
    }

    // ---- reader thread ----

    private void awaitReadGate() throws IOException {
        try {
            while (!readGate.await(50, TimeUnit.MILLISECONDS)) {
                if (socket.isClosed()) {
                    throw new EOFException("closed while paused");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private void readLoop() {
        IOException cause = null;
        try {
            while (true) {
                awaitReadGate();
                dispatch(PduCodec.read(in));
            }
        } catch (IOException e) {
            cause = e;
        } finally {
            closed.countDown();
            h2cSender.shutdown();
            failAll(cause);
        }
    }

    private void dispatch(Pdu p) {
        checkDigests(p);
        switch (p.type()) {
            case Pdu.CAPSULE_RESP -> onCapsuleResp(p);
            case Pdu.C2H_DATA -> onC2hData(p);
            case Pdu.R2T -> onR2t(p);
            case Pdu.C2H_TERM_REQ -> {
                termReq = TermReq.of(p);
                inbox.add(p);
            }
            default -> inbox.add(p);
        }
    }

    private void onCapsuleResp(Pdu p) {
        capsuleRespCount.incrementAndGet();
        Pending cmd = pending.remove(p.u16(20));
        if (cmd == null) {
            inbox.add(p);
            return;
        }
        Completion c = Completion.fromCapsuleResp(p, cmd.readBuffer);
        if (c.ok() && cmd.readBuffer != null && cmd.received != cmd.readBuffer.length) {
            protocolErrors.add("cid " + cmd.cid + ": success after " + cmd.received + " of " + cmd.readBuffer.length + " bytes");
        }
        cmd.future.complete(c);
    }

    private void onC2hData(Pdu p) {
        c2hDataCount.incrementAndGet();
        Pending cmd = pending.get(p.u16(8));
        if (cmd == null) {
            inbox.add(p);
            return;
        }
        long datao = p.u32(12);
        long datal = p.u32(16);
        byte[] data = p.data();
        if (datal != data.length || cmd.readBuffer == null || datao + datal > cmd.readBuffer.length || datao != cmd.received) {
            protocolErrors.add("cid " + cmd.cid + ": C2HData datao=" + datao + " datal=" + datal + " carried="
                    + data.length + " expected offset " + cmd.received);
            return;
        }
        System.arraycopy(data, 0, cmd.readBuffer, (int) datao, data.length);
        cmd.received += data.length;
        int done = Pdu.FLAG_LAST_PDU | Pdu.FLAG_SUCCESS;
        if ((p.flags() & done) == done && pending.remove(cmd.cid) != null) {
            cmd.future.complete(Completion.c2hSuccess(cmd.cid, cmd.readBuffer));
        }
    }

    private void onR2t(Pdu p) {
        r2tCount.incrementAndGet();
        Pending cmd = pending.get(p.u16(8));
        if (cmd == null) {
            inbox.add(p);
            return;
        }
        int ttag = p.u16(10);
        long r2to = p.u32(12);
        long r2tl = p.u32(16);
        if (cmd.writeData == null || r2tl == 0 || r2to + r2tl > cmd.writeData.length) {
            protocolErrors.add("cid " + cmd.cid + ": unexpected R2T r2to=" + r2to + " r2tl=" + r2tl);
            return;
        }
        h2cSender.execute(() -> sendH2cData(cmd, ttag, (int) r2to, (int) r2tl));
    }

    /** Answers one R2T with H2CData PDUs of at most MAXH2CDATA bytes, LAST_PDU on the last one. */
    private void sendH2cData(Pending cmd, int ttag, int r2to, int r2tl) {
        long max = icResp.maxH2cData() > 0 ? icResp.maxH2cData() : Integer.MAX_VALUE;
        int end = r2to + r2tl;
        try {
            for (int off = r2to; off < end; ) {
                int len = (int) Math.min(max, end - off);
                sendRaw(encodeH2cData(cmd.cid, ttag, off, Arrays.copyOfRange(cmd.writeData, off, off + len), off + len == end));
                off += len;
            }
        } catch (IOException e) {
            if (pending.remove(cmd.cid) != null) {
                cmd.future.completeExceptionally(e);
            }
        }
    }

    private void checkDigests(Pdu p) {
        if (Boolean.FALSE.equals(p.headerDigestOk())) {
            protocolErrors.add("header digest mismatch on " + p);
        }
        if (Boolean.FALSE.equals(p.dataDigestOk())) {
            protocolErrors.add("data digest mismatch on " + p);
        }
        IcResp ic = icResp;
        boolean carriesDigests = p.type() == Pdu.CAPSULE_RESP || p.type() == Pdu.C2H_DATA || p.type() == Pdu.R2T;
        if (ic != null && carriesDigests && ic.headerDigest() && p.headerDigestOk() == null) {
            protocolErrors.add("header digest missing on " + p);
        }
        if (ic != null && p.type() == Pdu.C2H_DATA && ic.dataDigest() && p.dataDigestOk() == null) {
            protocolErrors.add("data digest missing on " + p);
        }
        int align = (options.hpda() + 1) * 4;
        if (p.type() == Pdu.C2H_DATA && p.pdo() % align != 0) {
            protocolErrors.add("C2HData PDO " + p.pdo() + " is not a multiple of " + align + " (HPDA " + options.hpda()
                + ") on " + p);
        }
    }

    private void failAll(IOException cause) {
        String reason = "connection closed" + describeTermReq();
        for (Integer cid : pending.keySet()) {
            Pending p = pending.remove(cid);
            if (p != null) {
                p.future.completeExceptionally(new EOFException(reason + (cause != null ? " (" + cause + ")" : "")));
            }
        }
    }

    private String describeTermReq() {
        TermReq t = termReq;
        return t == null ? "" : " after " + t;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        h2cSender.shutdownNow();
    }
}
