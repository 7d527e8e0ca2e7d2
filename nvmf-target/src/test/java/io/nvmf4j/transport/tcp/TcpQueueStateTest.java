package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.nvmf4j.bdev.BdevIo;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.cmd.FabricsCommands;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.transport.PollGroupExecutor;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.transport.tcp.TcpRequest.State;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static io.nvmf4j.transport.tcp.TcpPdu.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The request state machine of an NVMe/TCP queue ({@link TcpQueue#process}), driven without a channel: the test
 * raises the reader's events (capsules, H2CData PDUs, the connection's close) on a queue whose {@link TcpQueue.Wire}
 * is a {@link FakeWire} recording what the queue sends, on a namespace whose device holds I/O until the test lets
 * it complete; tasks for the poll group run when the test runs them. Buffers come from a {@link CountingAllocator},
 * so a test can show that nothing is left referenced.
 */
class TcpQueueStateTest {
    private static final String SUBNQN = "nqn.2024-01.io.nvmf4j:tcp-state";
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000a1";
    private static final int BLOCK = 512;
    private static final int NSID = 1;

    private final CountingAllocator alloc = new CountingAllocator(4096);
    private final PollGroupExecutor executor = new PollGroupExecutor();
    private final TcpTransportConfig config = new TcpTransportConfig();
    private final Target target = new Target();
    private HeldDevice device;
    private CommandDispatcher dispatcher;
    private ListenerConfig listener;
    private TransportLimits limits;
    private TcpQueue admin;
    private FakeWire adminWire;
    private TcpQueue queue;
    private FakeWire wire;
    private int cntlid;
    /** Every queue made, closed after each test. */
    private final List<TcpQueue> queues = new ArrayList<>();

    /** One PDU the queue sent. */
    record Sent(int type, int cid, int ttag, int length, boolean success, int status, byte[] data) {
    }

    /** Records what the queue sends; the socket takes every byte at once unless {@link #holdWrites} is set. */
    final class FakeWire implements TcpQueue.Wire {
        final List<Sent> sent = new ArrayList<>();
        boolean open = true;
        boolean holdWrites;
        boolean released;
        int closes;
        long queued;
        long taken;

        /** The PDUs sent so far, taken off the record. */
        List<Sent> take() {
            List<Sent> s = List.copyOf(sent);
            sent.clear();
            return s;
        }

        /** The socket takes everything queued. */
        void drain() {
            taken = queued;
        }

        private void send(Sent s, int bytes) {
            sent.add(s);
            queued += bytes;
            if (!holdWrites) {
                taken = queued;
            }
        }

        @Override
        public ByteBufAllocator alloc() {
            return alloc;
        }

        @Override
        public PollGroupExecutor executor() {
            return executor;
        }

        @Override
        public boolean inExecutor() {
            return true;
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void icResp(int dgst, int maxH2cData) {
            send(new Sent(ICRESP, -1, -1, maxH2cData, false, 0, null), IC_SIZE);
        }

        @Override
        public void negotiated(boolean hdgst, boolean ddgst, int hpda) {
        }

        @Override
        public void capsuleResp(int dw0, int dw1, int sqhd, int sqid, int cid, int status) {
            send(new Sent(CAPSULE_RESP, cid, -1, dw0, false, status, null), RESP_HLEN);
        }

        @Override
        public void r2t(int cid, int ttag, int length) {
            send(new Sent(R2T, cid, ttag, length, false, 0, null), DATA_HLEN);
        }

        @Override
        public void c2hData(int cid, ByteBuf data, int length, boolean successFlag) {
            byte[] b = new byte[length];
            data.getBytes(0, b);
            send(new Sent(C2H_DATA, cid, -1, length, successFlag, 0, b), DATA_HLEN + length);
        }

        @Override
        public int frameHead() {
            return DATA_HLEN;
        }

        @Override
        public int frameTail() {
            return RESP_HLEN;
        }

        @Override
        public void c2hFrame(ByteBuf frame, int start, int length, boolean successFlag, int dw0, int dw1, int sqhd,
                             int sqid, int cid, int status) {
            byte[] b = new byte[length];
            frame.getBytes(start + frameHead(), b);
            send(new Sent(C2H_DATA, cid, -1, length, successFlag, 0, b), DATA_HLEN + length);
            if (!successFlag) {
                capsuleResp(dw0, dw1, sqhd, sqid, cid, status);
            }
        }

        @Override
        public void termReq(int fes, int fei, ByteBuf pdu, int idx) {
            send(new Sent(C2H_TERM_REQ, -1, -1, fei, false, fes, null), TERM_HLEN);
        }

        @Override
        public void close(boolean flushFirst) {
            closes++;
        }

        @Override
        public boolean batching() {
            return false; // every response is flushed at once
        }

        @Override
        public boolean flushUnlessBatching() {
            return true;
        }

        @Override
        public boolean flushBatch() {
            return false;
        }

        @Override
        public boolean staging() {
            return false;
        }

        @Override
        public long queuedBytes() {
            return queued;
        }

        @Override
        public long takenBytes() {
            return open ? taken : -1;
        }

        @Override
        public void release() {
            released = true;
        }
    }

    /** A device in memory whose reads and writes wait, while {@link #holding}, until the test lets them run. */
    static final class HeldDevice implements BlockDevice {
        final byte[] bytes;
        final List<Runnable> held = new ArrayList<>();
        boolean holding;

        HeldDevice(int blocks) {
            bytes = new byte[blocks * BLOCK];
        }

        private void run(Runnable op) {
            if (holding) {
                held.add(op);
            } else {
                op.run();
            }
        }

        /** Lets held I/O {@code i} (in arrival order) run and complete. */
        void release(int i) {
            held.set(i, null).run();
        }

        void put(long slba, byte[] data) {
            System.arraycopy(data, 0, bytes, (int) slba * BLOCK, data.length);
        }

        byte[] get(long slba, int length) {
            return Arrays.copyOfRange(bytes, (int) slba * BLOCK, (int) slba * BLOCK + length);
        }

        @Override
        public void read(BdevIo io) {
            run(() -> {
                io.buffer().setBytes(0, bytes, (int) io.offset(), io.length());
                io.bdevComplete(NvmeStatus.SUCCESS);
            });
        }

        @Override
        public void write(BdevIo io) {
            run(() -> {
                io.buffer().getBytes(0, bytes, (int) io.offset(), io.length());
                io.bdevComplete(NvmeStatus.SUCCESS);
            });
        }

        @Override
        public void flush(BdevIo io) {
            io.bdevComplete(NvmeStatus.SUCCESS);
        }

        @Override
        public void writeZeroes(BdevIo io) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void deallocate(BdevIo io) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void grow(long newNumBlocks) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String name() {
            return "held";
        }

        @Override
        public int blockSize() {
            return BLOCK;
        }

        @Override
        public long numBlocks() {
            return bytes.length / BLOCK;
        }

        @Override
        public boolean persistent() {
            return false;
        }

        @Override
        public void close() {
        }
    }

    @BeforeEach
    void setUp() {
        config.connectTimeoutMs = 0; // no timer: the test decides every event
        device = new HeldDevice(2048);
        Subsystem subsystem = new Subsystem(SUBNQN, false, "NVMF4JSTATE01", "nvmf4j-state", Target.FIRMWARE, 32, 1,
            0xFFEF, true);
        byte[] id = new byte[16];
        id[15] = 1;
        subsystem.addNamespace(new Namespace(NSID, device, id, id, null));
        listener = new ListenerConfig("tcp", "127.0.0.1", 4420);
        subsystem.listeners().add(listener);
        target.addSubsystem(subsystem);
        dispatcher = new CommandDispatcher(target);
        limits = new TransportLimits(TransportLimits.TRTYPE_TCP, config.inCapsuleDataSize, config.mdtsBytes,
            config.maxQueueDepth, config.maxIoQueues, 1);
        adminWire = new FakeWire();
        admin = newQueue(adminWire);
        connect(admin, 0, 0xFFFF, 0);
        cntlid = adminWire.take().get(0).length() & 0xFFFF; // the Connect response's DW0: the controller id
        capsule(admin, Sqe.fabrics(0x00).cid(2).u8(40, 0).u32(44, 0x14).u64(48, TcpPduFuzz.CC_ENABLE), null);
        assertThat(adminWire.take()).extracting(Sent::status).containsExactly(NvmeStatus.SUCCESS);
        wire = new FakeWire();
        queue = newQueue(wire);
        connect(queue, 1, cntlid, 0);
        assertThat(wire.take()).extracting(Sent::type, Sent::status)
            .containsExactly(tuple(CAPSULE_RESP, NvmeStatus.SUCCESS));
    }

    @AfterEach
    void tearDown() {
        for (TcpQueue q : queues) {
            if (!q.isClosed()) {
                q.closed();
            }
        }
        for (Controller c : target.allControllers()) {
            c.destroy("test over");
        }
        executor.runTasks();
        executor.shutdownNow();
    }

    private TcpQueue newQueue(FakeWire w) {
        TcpQueue q = new TcpQueue(dispatcher, config, limits, listener, IoObserver.NONE);
        q.attach(w, "127.0.0.1:50000");
        queues.add(q);
        q.onIcReq(0, 0);
        assertThat(w.take()).extracting(Sent::type).containsExactly(ICRESP);
        assertThat(q.phase()).isEqualTo(TcpQueue.Phase.READY);
        return q;
    }

    private void connect(TcpQueue q, int qid, int cntlidWanted, int cattr) {
        capsule(q, NvmeHost.connectCommand(qid, 31, cattr, 0).cid(1).sgl(Sqe.SGL_IN_CAPSULE, 0, 1024),
            NvmeHost.connectData(new byte[16], cntlidWanted, SUBNQN, HOSTNQN));
        assertThat(q.controller()).as("queue %d connected", qid).isNotNull();
    }

    /** The reader's CapsuleCmd event for {@code sqe} with {@code data} in the capsule (or none), then the tasks. */
    private void capsule(TcpQueue q, Sqe sqe, byte[] data) {
        ByteBuf pdu = alloc.directBuffer().writeBytes(PduCodec.encode(CAPSULE_CMD, 0, sqe.toBytes(), data, false,
            false));
        try {
            int pdo = pdu.getUnsignedByte(PDO);
            q.onCapsuleCmd(pdu, 0, pdo, data == null ? 0 : data.length, true, System.nanoTime());
        } finally {
            pdu.release(); // in-capsule data the queue keeps holds a reference of its own
        }
        executor.runTasks();
    }

    /**
     * The reader's events for one H2CData PDU: its header, then (accepted) its data placed at DATAO of the request's
     * buffer as the reader places it, and the PDU's end. Returns the request, or null when the header was refused.
     */
    private TcpRequest h2cData(int cid, int ttag, int datao, byte[] data, boolean last) {
        byte[] psh = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putShort((short) cid)
            .putShort((short) ttag).putInt(datao).putInt(data.length).array();
        ByteBuf pdu = alloc.directBuffer().writeBytes(PduCodec.encode(H2C_DATA, last ? FLAG_LAST_PDU : 0, psh, data,
            false, false));
        try {
            TcpRequest req = queue.onH2cDataHeader(pdu, 0, pdu.getUnsignedByte(FLAGS), data.length);
            if (req != null) {
                req.data.setBytes(datao, pdu, pdu.getUnsignedByte(PDO), data.length);
                queue.onH2cData(req, data.length, true);
            }
            return req;
        } finally {
            pdu.release();
        }
    }

    private static Sqe read(int cid, long slba, int bytes) {
        return NvmeHost.rw(NvmeHost.OPC_READ, NSID, slba, bytes / BLOCK).cid(cid).sgl(Sqe.SGL_TRANSPORT, 0, bytes);
    }

    private static Sqe writeInCapsule(int cid, long slba, int bytes) {
        return NvmeHost.rw(NvmeHost.OPC_WRITE, NSID, slba, bytes / BLOCK).cid(cid).sgl(Sqe.SGL_IN_CAPSULE, 0, bytes);
    }

    private static Sqe writeByR2t(int cid, long slba, int bytes) {
        return NvmeHost.rw(NvmeHost.OPC_WRITE, NSID, slba, bytes / BLOCK).cid(cid).sgl(Sqe.SGL_TRANSPORT, 0, bytes);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /** The one request not FREE. */
    private TcpRequest busy() {
        TcpRequest found = null;
        for (int i = 0; queue.request(i) != null; i++) {
            if (queue.request(i).state != State.FREE) {
                assertThat(found).as("a second request not FREE").isNull();
                found = queue.request(i);
            }
        }
        return found;
    }

    // ---------------------------------------------------------------- reads

    @Test
    void readSendsC2hDataThenTheResponseAndFreesOnceWritten() {
        byte[] data = random(4096, 1);
        device.put(8L, data);
        wire.holdWrites = true;
        device.holding = true;
        capsule(queue, read(5, 8, 4096), null);
        TcpRequest req = busy();
        assertThat(req.state).isEqualTo(State.EXECUTING);
        assertThat(req.frame).as("a 4 KiB read gets a response frame").isNotNull();
        assertThat(wire.sent).isEmpty();

        device.release(0);
        assertThat(wire.take()).extracting(Sent::type, Sent::cid, Sent::success, Sent::status)
            .containsExactly(tuple(C2H_DATA, 5, false, 0),
                tuple(CAPSULE_RESP, 5, false, NvmeStatus.SUCCESS));
        assertThat(req.state).as("the response is not yet written").isEqualTo(State.TRANSFERRING_CONTROLLER_TO_HOST);

        wire.drain();
        queue.reapWritten();
        assertThat(req.state).isEqualTo(State.FREE);
        assertThat(req.data).isNull();
        assertThat(queue.outstanding()).isZero();
    }

    @Test
    void readDataCarriesTheBytesOfTheDevice() {
        byte[] data = random(8192, 2);
        device.put(16L, data);
        capsule(queue, read(6, 16, 8192), null);
        List<Sent> sent = wire.take();
        assertThat(sent).hasSize(2);
        assertThat(sent.get(0).data()).isEqualTo(data);
        assertThat(queue.outstanding()).as("written at once: freed").isZero();
    }

    /** With SQ flow control disabled, a successful read's C2HData carries SUCCESS and no CapsuleResp follows. */
    @Test
    void readWithTheSuccessFlagSendsNoCapsuleResp() {
        wire = new FakeWire();
        queue = newQueue(wire);
        connect(queue, 2, cntlid, FabricsCommands.CATTR_DISABLE_SQFLOW);
        wire.take();
        byte[] data = random(4096, 3);
        device.put(24L, data);
        capsule(queue, read(7, 24, 4096), null);
        List<Sent> sent = wire.take();
        assertThat(sent).extracting(Sent::type, Sent::cid, Sent::success)
            .containsExactly(tuple(C2H_DATA, 7, true));
        assertThat(sent.get(0).data()).isEqualTo(data);
        assertThat(queue.outstanding()).isZero();

        config.c2hSuccess = false;
        capsule(queue, read(8, 24, 4096), null);
        assertThat(wire.take()).extracting(Sent::type, Sent::success)
            .containsExactly(tuple(C2H_DATA, false),
                tuple(CAPSULE_RESP, false));
    }

    // ---------------------------------------------------------------- writes

    @Test
    void writeWithInCapsuleDataExecutesWithoutR2t() {
        byte[] data = random(4096, 4);
        capsule(queue, writeInCapsule(9, 40, 4096), data);
        assertThat(wire.take()).extracting(Sent::type, Sent::cid, Sent::status)
            .containsExactly(tuple(CAPSULE_RESP, 9, NvmeStatus.SUCCESS));
        assertThat(device.get(40, 4096)).isEqualTo(data);
        assertThat(queue.outstanding()).isZero();
    }

    @Test
    void writeNeedingR2tTakesItsDataInSeveralH2cDataPdus() {
        int bytes = 16384;
        byte[] data = random(bytes, 5);
        capsule(queue, writeByR2t(10, 64, bytes), null);
        List<Sent> r2t = wire.take();
        assertThat(r2t).extracting(Sent::type, Sent::cid, Sent::length)
            .containsExactly(tuple(R2T, 10, bytes));
        int ttag = r2t.get(0).ttag();
        TcpRequest req = queue.request(ttag);
        assertThat(req.state).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);

        for (int off = 0; off < bytes; off += 4096) {
            boolean last = off + 4096 == bytes;
            assertThat(h2cData(10, ttag, off, Arrays.copyOfRange(data, off, off + 4096), last)).isSameAs(req);
            if (!last) {
                assertThat(req.state).as("after %d bytes", off + 4096).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
                assertThat(wire.sent).isEmpty();
            }
        }
        executor.runTasks();
        assertThat(wire.take()).extracting(Sent::type, Sent::cid, Sent::status)
            .containsExactly(tuple(CAPSULE_RESP, 10, NvmeStatus.SUCCESS));
        assertThat(device.get(64, bytes)).isEqualTo(data);
        assertThat(req.state).isEqualTo(State.FREE);
    }

    @Test
    void anH2cDataForAnotherTransferTagTerminatesTheConnection() {
        capsule(queue, writeByR2t(11, 80, 8192), null);
        int ttag = wire.take().get(0).ttag();
        assertThat(h2cData(11, ttag + 1, 0, new byte[8192], true)).isNull();
        assertThat(wire.take()).extracting(Sent::type, Sent::status, Sent::length)
            .containsExactly(tuple(C2H_TERM_REQ, FES_INVALID_HEADER_FIELD, DATA_TTAG));
        assertThat(queue.phase()).isEqualTo(TcpQueue.Phase.TERMINATING);
        assertThat(queue.receiving()).isFalse();
        assertThat(queue.request(ttag).state).as("its write still waits, until the close")
            .isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
        closeAndExpectNothingLeft();
    }

    @Test
    void anH2cDataAtAnotherOffsetTerminatesTheConnection() {
        capsule(queue, writeByR2t(12, 96, 8192), null);
        int ttag = wire.take().get(0).ttag();
        assertThat(h2cData(12, ttag, 0, new byte[4096], false)).isNotNull();
        assertThat(h2cData(12, ttag, 2048, new byte[4096], false)).as("overlaps what came").isNull();
        assertThat(wire.take()).extracting(Sent::type, Sent::status, Sent::length)
            .containsExactly(tuple(C2H_TERM_REQ, FES_DATA_OUT_OF_RANGE, DATA_DATAO));
        assertThat(queue.receiving()).isFalse();
        closeAndExpectNothingLeft();
    }

    @Test
    void aCapsuleBeyondTheQueueTerminatesWithAPduSequenceError() {
        device.holding = true;
        for (int i = 0; i < 32; i++) { // SQSIZE 31: 32 commands may be outstanding
            capsule(queue, read(100 + i, i, 512), null);
        }
        assertThat(queue.outstanding()).isEqualTo(32);
        assertThat(wire.sent).isEmpty();
        capsule(queue, read(200, 0, 512), null);
        assertThat(wire.take()).extracting(Sent::type, Sent::status)
            .containsExactly(tuple(C2H_TERM_REQ, FES_PDU_SEQUENCE_ERROR));
        for (int i = 0; i < 32; i++) {
            device.release(i);
        }
        assertThat(wire.sent).as("no response once terminated").isEmpty();
        assertThat(queue.outstanding()).isZero();
        closeAndExpectNothingLeft();
    }

    // ---------------------------------------------------------------- completions

    @Test
    void completionsOutOfOrderAnswerEachCommandWhenItCompletes() {
        device.put(0, random(8192, 6));
        device.holding = true;
        capsule(queue, read(21, 0, 4096), null);
        capsule(queue, writeInCapsule(22, 100, 4096), random(4096, 7));
        capsule(queue, read(23, 8, 4096), null);
        assertThat(device.held).hasSize(3);
        assertThat(queue.outstanding()).isEqualTo(3);

        device.release(2);
        assertThat(wire.take()).extracting(Sent::type, Sent::cid)
            .containsExactly(tuple(C2H_DATA, 23),
                tuple(CAPSULE_RESP, 23));
        device.release(1);
        assertThat(wire.take()).extracting(Sent::type, Sent::cid)
            .containsExactly(tuple(CAPSULE_RESP, 22));
        assertThat(queue.outstanding()).as("the first read still at the device").isEqualTo(1);
        assertThat(busy().cid()).isEqualTo(21);
        assertThat(busy().state).isEqualTo(State.EXECUTING);
        device.release(0);
        assertThat(wire.take()).extracting(Sent::type, Sent::cid)
            .containsExactly(tuple(C2H_DATA, 21),
                tuple(CAPSULE_RESP, 21));
        assertThat(queue.outstanding()).isZero();
    }

    // ---------------------------------------------------------------- teardown

    /**
     * The connection closes with a write waiting for its H2CData, a read's response not yet written and a read at the
     * device: the first two are forced to COMPLETED at once, the third when the device completes it (no response);
     * every buffer the queue took goes back (the slots' own response buffers too).
     */
    @Test
    void closingAbortsWaitingRequestsAndReleasesEveryBuffer() {
        capsule(queue, writeByR2t(31, 200, 8192), null);
        int ttag = wire.take().get(0).ttag();
        assertThat(h2cData(31, ttag, 0, new byte[4096], false)).isNotNull();
        TcpRequest write = queue.request(ttag);

        wire.holdWrites = true;
        capsule(queue, read(32, 0, 4096), null);
        assertThat(wire.take()).hasSize(2);
        device.holding = true;
        capsule(queue, read(33, 8, 4096), null);
        assertThat(queue.outstanding()).isEqualTo(3);
        TcpRequest held = null;
        TcpRequest responding = null;
        for (int i = 0; queue.request(i) != null; i++) {
            TcpRequest r = queue.request(i);
            if (r.state == State.EXECUTING) {
                held = r;
            } else if (r.state == State.TRANSFERRING_CONTROLLER_TO_HOST) {
                responding = r;
            }
        }
        assertThat(held).isNotNull();
        assertThat(responding).isNotNull();
        assertThat(alloc.leaked()).as("buffers the three requests hold").isNotEmpty();

        wire.open = false;
        queue.closed();
        assertThat(wire.released).isTrue();
        assertThat(write.state).isEqualTo(State.FREE);
        assertThat(responding.state).isEqualTo(State.FREE);
        assertThat(held.state).as("still at the device").isEqualTo(State.EXECUTING);
        assertThat(queue.isClosed()).isTrue();

        device.release(0);
        executor.runTasks();
        assertThat(held.state).isEqualTo(State.FREE);
        assertThat(wire.sent).as("nothing answered after the close").isEmpty();
        assertThat(queue.outstanding()).isZero();
        assertThat(alloc.leaked()).as("buffers still referenced after the close").isEmpty();
    }

    /** Closes the I/O queue's connection: nothing outstanding, nothing the queue took still referenced. */
    private void closeAndExpectNothingLeft() {
        wire.open = false;
        queue.closed();
        executor.runTasks();
        assertThat(queue.outstanding()).isZero();
        assertThat(alloc.leaked()).as("buffers still referenced after the close").isEmpty();
    }
}
