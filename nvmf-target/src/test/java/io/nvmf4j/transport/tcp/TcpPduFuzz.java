package io.nvmf4j.transport.tcp;

import io.nvmf4j.testhost.FreePorts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.fuzz.Escape;
import io.nvmf4j.fuzz.FuzzTarget;
import io.nvmf4j.fuzz.Mutator;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

import static io.nvmf4j.transport.tcp.TcpPdu.*;

/**
 * NVMe/TCP receive path under fuzz: a real {@link TcpQueue} of a running target (the same
 * {@link CommandDispatcher}, subsystems and malloc namespaces a socket would reach) fed through an
 * {@link EmbeddedChannel}. A case is a plausible session (ICReq, Connect, for I/O cases an enabled admin
 * controller and an I/O queue) followed by 1 to 6 PDUs taken from templates (admin, fabrics and I/O
 * commands with in-capsule or transport SGLs, H2CData answering the last R2T, H2CTermReq) and mutated
 * before or after framing; the byte stream reaches the queue in random chunks.
 *
 * <p>Property: no exception reaches the channel ({@link TcpQueue#failure()}), no command ends in Internal
 * Error (what {@code commandFailed} turns a handler's exception into), every C2HTermReq carries a defined
 * FES and closes the connection, and once the channels are closed no controller is left behind. Every
 * so often a real host connects over TCP and writes and reads back data: the target still serves.
 */
public final class TcpPduFuzz implements FuzzTarget {
    private static final String HOSTNQN = TestTarget.HOSTNQN;
    static final int CC_ENABLE = 0x460001; // IOCQES 4, IOSQES 6, EN
    private static final int MAX_PDU = 16384;
    /** How far ahead a long command's next step is scheduled at most (it yields for 1 us). */
    private static final long STEP_TASK_NANOS = 1_000_000;
    /** How long the steps of a command still running when its connection closed may take to end. */
    private static final long STEPS_BOUND_NANOS = 60_000_000_000L;

    private final TargetConfig cfg;
    private final ConfigController<JavaEngine> nvmf;
    private final CommandDispatcher dispatcher;
    private final TransportLimits limits;
    private final ListenerConfig listener;
    private final int port;
    private long healthSeed = 1;
    /** Outcomes, for the summary: [0] commands answered with success, [1] with an error status, [2] terminations. */
    public final long[] outcomes = new long[3];

    public TcpPduFuzz() throws IOException {
        port = FreePorts.pick();
        cfg = TestTarget.config(port);
        // a case whose command outlives its connections is reported as such (below, by its controller's count); its
        // controller is then released after 100 ms, not 50 s, so the cases after it (the same host, whose admin
        // Connect waits for that controller) are not all reported as refused Connects
        cfg.commandQuiesceTimeMs = TargetConfig.MIN_COMMAND_QUIESCE_TIME_MS;
        nvmf = JavaEngine.start(cfg);
        listener = cfg.subsystems.get(0).listeners.get(0);
        dispatcher = new CommandDispatcher(nvmf.engine().target());
        limits = new TransportLimits(TransportLimits.TRTYPE_TCP, cfg.tcp.inCapsuleDataSize, cfg.tcp.mdtsBytes,
            cfg.tcp.maxQueueDepth, cfg.tcp.maxIoQueues, 1);
    }

    @Override
    public String name() {
        return "tcp-pdu";
    }

    /** What the session learnt from the target's PDUs so far. */
    private static final class Session {
        final boolean hdgst;
        final boolean ddgst;
        int cntlid = -1;
        int r2tCccid;
        int r2tTtag;
        int r2tOffset;
        int r2tLength;
        boolean terminated;
        /** The target's byte stream not yet parsed (heap: the fuzzer's own, not the target's pool). */
        final ByteBuf received = Unpooled.buffer(256);

        Session(boolean hdgst, boolean ddgst) {
            this.hdgst = hdgst;
            this.ddgst = ddgst;
        }
    }

    @Override
    public void run(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int dgst = r.nextInt(4) == 0 ? r.nextInt(4) : 0;
        boolean io = r.nextInt(2) == 0;
        EmbeddedChannel admin = channel();
        EmbeddedChannel ioq = null;
        List<Controller> controllers = List.of();
        try {
            Session s = new Session((dgst & 1) != 0, (dgst & 2) != 0);
            int mode = r.nextInt(16);
            if (mode == 0) { // the ICReq itself mutated
                feed(admin, s, r, Mutator.mutate(icReq(dgst), r, 256));
                feed(admin, s, r, capsule(s, connect(0, 31, 0xFFFF), connectData(0xFFFF)));
                return;
            }
            feed(admin, s, r, icReq(dgst));
            if (mode == 1) { // the admin Connect mutated, SQE and data before framing or the frame after
                feed(admin, s, r, mutatedCapsule(s, r, connect(0, 31, 0xFFFF), connectData(0xFFFF)));
                return;
            }
            feed(admin, s, r, capsule(s, connect(0, 31, 0xFFFF), connectData(0xFFFF)));
            if (s.cntlid < 0) {
                throw new Escape("a valid admin Connect was refused");
            }
            Session target = s;
            EmbeddedChannel ch = admin;
            if (io) {
                feed(admin, s, r, capsule(s, propertySet(0x14, CC_ENABLE), null));
                ioq = channel();
                Session q = new Session((dgst & 1) != 0, (dgst & 2) != 0);
                feed(ioq, q, r, icReq(dgst));
                byte[] data = connectData(s.cntlid);
                if (mode == 2) {
                    feed(ioq, q, r, mutatedCapsule(q, r, connect(1, 31, 0), data));
                    return;
                }
                feed(ioq, q, r, capsule(q, connect(1, 31, 0), data));
                target = q;
                ch = ioq;
            }
            int pdus = 1 + r.nextInt(6);
            for (int i = 0; i < pdus && !target.terminated && ch.isOpen(); i++) {
                byte[][] t = io ? ioTemplate(target, r) : adminTemplate(target, r);
                feed(ch, target, r, r.nextInt(4) == 0 ? frame(target, t, r) : mutatedCapsule(target, r, t[0], t[1], t[2]));
            }
        } finally {
            controllers = nvmf.engine().target().allControllers();
            close(ioq);
            close(admin);
        }
        if (!nvmf.engine().target().allControllers().isEmpty()) {
            throw new Escape("controllers left after both connections closed: " + nvmf.engine().target().allControllers());
        }
        for (Controller c : controllers) {
            if (c.deviceCommands() != 0) {
                throw new Escape(c + " still counts " + c.deviceCommands() + " command(s) on its devices after both"
                    + " connections closed and every step due ran (a later Connect of its host waits for them)");
            }
        }
    }

    /**
     * Whether a task scheduled on a queue's loop (as a yielding command's next step) still runs once due after the
     * target ended the connection with a C2HTermReq, as on a real event loop: the cases rely on it. Scheduled 20 ms
     * ahead, so that it is not yet due when the connection closes; waited for up to 5 s.
     */
    public boolean taskScheduledBeforeTerminationRuns() {
        EmbeddedChannel ch = channel();
        boolean[] ran = {false};
        Session s = new Session(false, false);
        SplittableRandom r = new SplittableRandom(1);
        try {
            feed(ch, s, r, icReq(0));
            ch.eventLoop().schedule(() -> ran[0] = true, 20, java.util.concurrent.TimeUnit.MILLISECONDS);
            feed(ch, s, r, PduCodec.encode(0x0F, 0, new byte[16], null, false, false)); // no such PDU type
            if (!s.terminated || ch.isOpen()) {
                throw new Escape("a PDU of type 0x0F did not end the connection with a C2HTermReq");
            }
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!ran[0] && System.nanoTime() - deadline < 0) {
                runTasks(ch);
                LockSupport.parkNanos(1_000_000);
            }
        } finally {
            close(ch);
        }
        return ran[0];
    }

    private EmbeddedChannel channel() {
        return new EmbeddedChannel(TcpQueue.handler(dispatcher, cfg.tcp, limits, listener, IoObserver.NONE));
    }

    /**
     * Closes the channel and runs its tasks until no step of a long command is left: a Dataset Management or Write
     * Zeroes that used up its poll-thread budget goes on from a task scheduled a microsecond ahead
     * ({@code Request.yieldStep}), and a channel finished with one pending would never complete the command nor
     * release its data (a slow machine yields where a fast one finishes in one step). Closed through the pipeline,
     * as the target closes its own connections ({@code ctx.close()}, also after a C2HTermReq): a call of
     * {@code EmbeddedChannel.close()} cancels every task scheduled on the channel's loop, a step not yet due among
     * them, which a real event loop never does (a loaded machine's DSM then stayed counted on its controller for
     * good, and every later Connect of its host waited for it). Timers further ahead (none should outlive the
     * connection) are left to {@code finishAndReleaseAll}.
     */
    private static void close(EmbeddedChannel ch) {
        if (ch != null) {
            ch.pipeline().close();
            long deadline = System.nanoTime() + STEPS_BOUND_NANOS;
            for (long next = runTasks(ch); next >= 0 && next <= STEP_TASK_NANOS; next = runTasks(ch)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new Escape("a long command still steps " + STEPS_BOUND_NANOS / 1_000_000_000L
                        + " s after its connection closed");
                }
                LockSupport.parkNanos(Math.max(next, 1_000));
            }
            ch.finishAndReleaseAll();
        }
    }

    /** Runs what is due; returns nanoseconds to the next scheduled task, or -1 when none is scheduled. */
    private static long runTasks(EmbeddedChannel ch) {
        ch.runPendingTasks();
        return ch.runScheduledPendingTasks();
    }

    /** Feeds {@code bytes} in 1 to 3 chunks, then checks every PDU the target sent back. */
    private void feed(EmbeddedChannel ch, Session s, SplittableRandom r, byte[] bytes) {
        if (!ch.isOpen()) {
            return;
        }
        int at = 0;
        int chunks = r.nextInt(4) == 0 ? 1 + r.nextInt(3) : 1;
        for (int i = 0; i < chunks && ch.isOpen(); i++) {
            int end = i == chunks - 1 ? bytes.length : at + r.nextInt(bytes.length - at + 1);
            ch.writeInbound(Unpooled.wrappedBuffer(bytes, at, end - at));
            at = end;
        }
        ch.runPendingTasks();
        TcpPduReader q = ch.pipeline().get(TcpPduReader.class);
        Throwable f = q == null ? null : q.failure();
        if (f != null) {
            throw new Escape("exception reached the channel: " + f, f);
        }
        checkOutbound(ch, s);
    }

    /** Takes what the target wrote into the session's byte stream and checks each whole PDU in it. */
    private void checkOutbound(EmbeddedChannel ch, Session s) {
        for (ByteBuf b = ch.readOutbound(); b != null; b = ch.readOutbound()) {
            try {
                s.received.writeBytes(b);
            } finally {
                b.release();
            }
        }
        ByteBuf in = s.received;
        while (in.readableBytes() >= CH_SIZE && in.readableBytes() >= in.getIntLE(in.readerIndex() + PLEN)) {
            int off = in.readerIndex();
            int type = in.getUnsignedByte(off);
            int plen = in.getIntLE(off + PLEN);
            if (plen < CH_SIZE) {
                throw new Escape("target sent a PDU with PLEN " + plen);
            }
            switch (type) {
                case CAPSULE_RESP -> onResponse(s, in, off + CH_SIZE);
                case C2H_TERM_REQ -> {
                    int fes = in.getUnsignedShortLE(off + TERM_FES);
                    if (fes < FES_INVALID_HEADER_FIELD || fes > FES_UNSUPPORTED_PARAMETER) {
                        throw new Escape("C2HTermReq with undefined FES " + fes);
                    }
                    s.terminated = true;
                    outcomes[2]++;
                }
                case R2T -> {
                    s.r2tCccid = in.getUnsignedShortLE(off + 8);
                    s.r2tTtag = in.getUnsignedShortLE(off + 10);
                    s.r2tOffset = in.getIntLE(off + 12);
                    s.r2tLength = in.getIntLE(off + 16);
                }
                case ICRESP, C2H_DATA -> {
                    // data and the ICResp need no check here
                }
                default -> throw new Escape("target sent a PDU of type " + type);
            }
            in.skipBytes(plen);
        }
        in.discardReadBytes();
        if (s.terminated) {
            ch.runPendingTasks();
            if (ch.isOpen()) {
                throw new Escape("C2HTermReq sent but the connection stays open");
            }
        }
    }

    private void onResponse(Session s, ByteBuf b, int cqe) {
        int status = NvmeStatus.fromCqeField(b.getUnsignedShortLE(cqe + 14));
        if ((status & 0x7FF) == NvmeStatus.INTERNAL_ERROR) {
            throw new Escape("a command ended in Internal Error (a handler threw): cid " + b.getUnsignedShortLE(cqe + 12));
        }
        if (NvmeStatus.isSuccess(status)) {
            outcomes[0]++;
            if (s.cntlid < 0) {
                s.cntlid = b.getUnsignedShortLE(cqe);
            }
        } else {
            outcomes[1]++;
        }
    }

    // ---------------------------------------------------------------- inputs

    static byte[] icReq(int dgst) {
        byte[] psh = new byte[IC_SIZE - CH_SIZE];
        psh[IC_DGST - CH_SIZE] = (byte) dgst;
        psh[IC_MAXR2T - CH_SIZE] = 0;
        return PduCodec.encode(ICREQ, 0, psh, null, false, false);
    }

    private static byte[] capsule(Session s, byte[] sqe, byte[] data) {
        return PduCodec.encode(CAPSULE_CMD, 0, sqe, data, s.hdgst, s.ddgst);
    }

    /** Mutates the SQE and the data before framing (digests stay right), or the framed PDU after. */
    private static byte[] mutatedCapsule(Session s, SplittableRandom r, byte[] sqe, byte[] data) {
        return mutatedCapsule(s, r, sqe, data, null);
    }

    private static byte[] mutatedCapsule(Session s, SplittableRandom r, byte[] sqe, byte[] data, byte[] type) {
        int pduType = type == null ? CAPSULE_CMD : type[0];
        if (r.nextBoolean()) {
            byte[] m = Mutator.mutate(sqe, r, sqe.length);
            byte[] psh = m.length == sqe.length ? m : Arrays.copyOf(m, sqe.length);
            byte[] d = data == null || r.nextBoolean() ? data : Mutator.mutate(data, r, MAX_PDU);
            return PduCodec.encode(pduType, 0, psh, d, s.hdgst, s.ddgst);
        }
        return Mutator.mutate(PduCodec.encode(pduType, 0, sqe, data, s.hdgst, s.ddgst), r, MAX_PDU);
    }

    /** An unmutated template, or (rarely) a PDU of random bytes with a valid common header. */
    private static byte[] frame(Session s, byte[][] t, SplittableRandom r) {
        if (r.nextInt(8) == 0) {
            byte[] psh = new byte[r.nextInt(128)];
            for (int i = 0; i < psh.length; i++) {
                psh[i] = (byte) r.nextInt(256);
            }
            return PduCodec.encode(r.nextInt(12), 0, psh, null, s.hdgst, s.ddgst);
        }
        return PduCodec.encode(t[2] == null ? CAPSULE_CMD : t[2][0], 0, t[0], t[1], s.hdgst, s.ddgst);
    }

    static byte[] connect(int qid, int sqsize, int cntlid) {
        return NvmeHost.connectCommand(qid, sqsize, 0, qid == 0 ? TestTarget.KATO_MS : 0).cid(1)
            .sgl(Sqe.SGL_IN_CAPSULE, 0, 1024).toBytes();
    }

    static byte[] connectData(int cntlid) {
        return NvmeHost.connectData(new byte[16], cntlid, TestTarget.SUBNQN, HOSTNQN);
    }

    static byte[] propertySet(int offset, int value) {
        return Sqe.fabrics(0x00).cid(2).u8(40, 0).u32(44, offset).u64(48, value).toBytes();
    }

    private static byte[][] cmd(Sqe sqe, byte[] data) {
        return new byte[][] {sqe.toBytes(), data, null};
    }

    private static byte[] bytes(SplittableRandom r, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) r.nextInt(256);
        }
        return b;
    }

    /** SQE, in-capsule data (or null) and, for a non-capsule PDU, {type} as the third element. */
    private static byte[][] adminTemplate(Session s, SplittableRandom r) {
        int cid = 10 + r.nextInt(4);
        return switch (r.nextInt(13)) {
            case 0 -> cmd(Sqe.of(0x06).cid(cid).cdw(10, r.nextInt(4)).sgl(Sqe.SGL_TRANSPORT, 0, 4096), null);
            case 1 -> cmd(Sqe.of(0x02).cid(cid).nsid(-1).cdw(10, (1 + r.nextInt(5)) | (127 << 16))
                .sgl(Sqe.SGL_TRANSPORT, 0, 512), null);
            case 2 -> cmd(Sqe.of(0x0A).cid(cid).cdw(10, r.nextInt(16)), null);
            case 3 -> cmd(Sqe.of(0x09).cid(cid).cdw(10, 7).cdw(11, 0x00030003), null);
            case 4 -> cmd(Sqe.of(0x18).cid(cid), null);
            case 5 -> cmd(Sqe.of(0x0C).cid(cid), null);
            case 6 -> cmd(Sqe.of(0x08).cid(cid).cdw(10, 10 << 16), null);
            case 7 -> cmd(Sqe.fabrics(0x04).cid(cid).u8(40, 1).u32(44, 0), null);
            case 8 -> cmd(Sqe.fabrics(0x00).cid(cid).u32(44, 0x14).u64(48, CC_ENABLE), null);
            case 9 -> cmd(Sqe.of(0x09).cid(cid).cdw(10, 0x81).sgl(Sqe.SGL_IN_CAPSULE, 0, 16), bytes(r, 16));
            case 10 -> new byte[][] {Sqe.fabrics(0x01).cid(cid).sgl(Sqe.SGL_IN_CAPSULE, 0, 1024).toBytes(),
                connectData(0xFFFF), null};
            case 11 -> h2cData(s, r);
            default -> new byte[][] {new byte[TERM_HLEN - CH_SIZE], null, {H2C_TERM_REQ}};
        };
    }

    private static byte[][] ioTemplate(Session s, SplittableRandom r) {
        int cid = 10 + r.nextInt(4);
        int nsid = r.nextInt(8) == 0 ? 3 : 1;
        long slba = r.nextInt(1024);
        int nlb = r.nextInt(8); // 0's based
        int len = (nlb + 1) * TestTarget.BLOCK_SIZE;
        return switch (r.nextInt(10)) {
            case 0 -> cmd(Sqe.of(0x01).cid(cid).nsid(nsid).cdw(10, (int) slba).cdw(12, nlb)
                .sgl(Sqe.SGL_IN_CAPSULE, 0, len), bytes(r, len));
            case 1, 2 -> cmd(Sqe.of(0x01).cid(cid).nsid(nsid).cdw(10, (int) slba).cdw(12, nlb)
                .sgl(Sqe.SGL_TRANSPORT, 0, len), null);
            case 3 -> cmd(Sqe.of(0x02).cid(cid).nsid(nsid).cdw(10, (int) slba).cdw(12, nlb)
                .sgl(Sqe.SGL_TRANSPORT, 0, len), null);
            case 4 -> cmd(Sqe.of(0x00).cid(cid).nsid(nsid), null);
            case 5 -> cmd(Sqe.of(0x08).cid(cid).nsid(nsid).cdw(10, (int) slba).cdw(12, nlb), null);
            case 6 -> {
                int ranges = 1 + r.nextInt(4);
                byte[] d = new byte[16 * ranges];
                for (int i = 0; i < ranges; i++) {
                    putLe(d, 16 * i + 4, 1 + r.nextInt(64), 4);
                    putLe(d, 16 * i + 8, r.nextInt(4096), 8);
                }
                yield cmd(Sqe.of(0x09).cid(cid).nsid(nsid).cdw(10, ranges - 1).cdw(11, 4)
                    .sgl(Sqe.SGL_IN_CAPSULE, 0, d.length), d);
            }
            case 7 -> cmd(Sqe.of(0x05).cid(cid).nsid(nsid).cdw(10, (int) slba).cdw(12, nlb)
                .sgl(Sqe.SGL_IN_CAPSULE, 0, len), new byte[len]);
            default -> h2cData(s, r);
        };
    }

    /** H2CData for the last R2T (its CCCID, TTAG, offset and length), the PSH as the first element. */
    private static byte[][] h2cData(Session s, SplittableRandom r) {
        int len = Math.max(1, Math.min(s.r2tLength, 8192));
        byte[] psh = new byte[DATA_HLEN - CH_SIZE];
        putLe(psh, DATA_CCCID - CH_SIZE, s.r2tCccid, 2);
        putLe(psh, DATA_TTAG - CH_SIZE, s.r2tTtag, 2);
        putLe(psh, DATA_DATAO - CH_SIZE, s.r2tOffset, 4);
        putLe(psh, DATA_DATAL - CH_SIZE, len, 4);
        return new byte[][] {psh, bytes(r, len), {H2C_DATA}};
    }

    private static void putLe(byte[] b, int at, long v, int width) {
        for (int i = 0; i < width; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    // ---------------------------------------------------------------- still serving

    /** A real host on a real socket: connect, write, read back, compare. */
    @Override
    public void checkStillServes() {
        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, HOSTNQN,
            TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            byte[] data = new byte[8192];
            new SplittableRandom(healthSeed++).nextBytes(data);
            var w = c.io(0).write(1, 4096, data);
            var rd = c.io(0).read(1, 4096, data.length / TestTarget.BLOCK_SIZE);
            if (!w.ok() || !rd.ok() || !Arrays.equals(rd.data(), data)) {
                throw new Escape("the target no longer serves a valid write and read: " + w + " / " + rd);
            }
        } catch (IOException e) {
            throw new Escape("the target no longer accepts a host: " + e, e);
        }
        // the real host's controller goes away on its event loop once the socket closes; the cases after
        // this check count controllers, so wait for it (a controller that stays is a leak all the same)
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!nvmf.engine().target().allControllers().isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new Escape("the real host's controller outlived its connection by 5 s: "
                    + nvmf.engine().target().allControllers());
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    @Override
    public String toString() {
        return name() + " (" + outcomes[0] + " commands succeeded, " + outcomes[1] + " rejected with a status, "
            + outcomes[2] + " connections terminated)";
    }

    @Override
    public void close() {
        nvmf.close();
    }
}
