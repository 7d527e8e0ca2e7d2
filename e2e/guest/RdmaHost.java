import io.nvmf4j.rdma.CmEvent;
import io.nvmf4j.rdma.Completions;
import io.nvmf4j.rdma.Errno;
import io.nvmf4j.rdma.HugepageArena;
import io.nvmf4j.rdma.QpCaps;
import io.nvmf4j.rdma.Rdma;
import io.nvmf4j.rdma.RdmaCm;
import io.nvmf4j.rdma.RecvWorkRequests;
import io.nvmf4j.rdma.SendWorkRequests;
import io.nvmf4j.rdma.Verbs;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * e2e helper: a small NVMe/RDMA host (initiator) that sends what the Linux host never does, a Last
 * Segment SGL (type 0x3, subtype Offset) whose keyed data block descriptors sit in the capsule, and
 * checks the target's answers. Run in the guest with the rdma-cm classes on the class path, as a
 * single-file program:
 *
 * <pre>java -cp native/target/classes:rdma-cm/target/classes e2e/guest/RdmaHost.java MODE ADDRESS PORT NQN [SECONDS]</pre>
 *
 * MODE:
 * <ul>
 * <li>{@code multi-sgl}: writes and reads namespace 1 with multi-descriptor SGLs (4, 16, 16 at MDTS,
 *     a list at an offset in the capsule, a one-entry list) and with one keyed descriptor, reads back
 *     with differently split SGLs (the target answers with RDMA WRITEs into every descriptor) and
 *     compares the bytes, and that no byte outside the descriptors was written;</li>
 * <li>{@code bad-sgl}: SGLs the target must refuse, each with its exact NVMe status, each followed by
 *     good I/O on the same queue (and a check that a refused write changed no block);</li>
 * <li>{@code all}: both;</li>
 * <li>{@code stress}: QD 32 of random 4-64 KiB writes, each read back (1-16 descriptors each way) and
 *     verified, until killed (or for SECONDS); prints "running" once I/O is going;</li>
 * <li>{@code remote-access TARGET_PID}: RDMA WRITEs into the target's registered regions with their keys
 *     must fail with a remote access error, then a fresh host passes the data cases
 *     ({@link RemoteAccess});</li>
 * <li>{@code stalled-host [SECONDS]}: a second host stalls six I/O queues (no receive posted) while this
 *     one runs the stress for SECONDS (20): the target must disconnect every stalled queue and this
 *     host's I/O must not stop ({@link StalledHost}).</li>
 * <li>{@code fuzz [SECONDS [SEED [WORKERS]]]}: the live RDMA fuzzer ({@link Fuzz}) for SECONDS (20) with
 *     WORKERS (2) threads; its own output (summary lines starting {@code rdma-fuzz:}), exit 0 when clean.
 *     Needs nvmf-target's test classes on the class path too (the byte mutator).</li>
 * </ul>
 * One line per case: {@code case-name PASS|FAIL detail}. Exit 0 when every case passed, 1 when one
 * failed, 2 when RDMA is unavailable.
 *
 * <p>The host: CM connect with {@code nvme_rdma_cm_req} private data (recfmt 0, qid, hrqsize,
 * hsqsize), a QP with its own receive queue of response buffers, one registered arena per queue for
 * command capsules (SQE + in-capsule data), responses and data; Fabrics Connect with the 1 KiB connect
 * data in the capsule (admin and I/O queues), Property Set CC.EN, Property Get CSTS until RDY; Keep
 * Alive every few seconds while I/O runs.
 */
public class RdmaHost {
    // NVMe status as the target's NvmeStatus: CQE status field >> 1 (SC bits 7:0, SCT 10:8, DNR bit 14)
    static final int SUCCESS = 0;
    static final int DNR = 1 << 14;
    static final int INVALID_SGL_SEGMENT = DNR | 0x0D;
    static final int INVALID_SGL_COUNT = DNR | 0x0E;
    static final int DATA_SGL_LENGTH_INVALID = DNR | 0x0F;
    static final int SGL_TYPE_INVALID = DNR | 0x11;

    // SGL descriptor identifiers (byte 15: type << 4 | subtype)
    static final int SGL_DATA_BLOCK_OFFSET = 0x01;
    static final int SGL_KEYED = 0x40;
    static final int SGL_LAST_SEGMENT_OFFSET = 0x31;
    static final int SGL_LAST_SEGMENT_ADDRESS = 0x30;
    static final int SGL_SEGMENT_OFFSET = 0x21;

    static final int OPC_WRITE = 0x01;
    static final int OPC_READ = 0x02;
    static final int OPC_KEEP_ALIVE = 0x18;
    static final int OPC_FABRICS = 0x7F;
    static final int FCTYPE_PROPERTY_SET = 0x00;
    static final int FCTYPE_CONNECT = 0x01;
    static final int FCTYPE_PROPERTY_GET = 0x04;
    static final int PROP_CC = 0x14;
    static final int PROP_CSTS = 0x1C;
    /** Flags byte of the SQE: PSDT 01b, SGLs for data. */
    static final int PSDT_SGL = 0x40;

    static final int NSID = 1;
    static final int BLOCK = 512;
    static final long NS_BLOCKS = 262_144;
    static final int MDTS = 131_072;
    static final int MSDBD = 16;
    /** The target's inCapsuleDataSize (e2e config); the capsule is the SQE plus this. */
    static final int IN_CAPSULE = 4096;
    static final int ADMIN_DEPTH = 32;
    static final int IO_DEPTH = 64;
    static final int STRESS_QD = 32;
    static final int KATO_MS = 15_000;
    static final int KEEP_ALIVE_EVERY_MS = 3_000;
    static final int TIMEOUT_MS = 15_000;

    static int passed;
    static int failed;

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.out.println("usage: RdmaHost multi-sgl|bad-sgl|all|stress|stalled-host ADDRESS PORT NQN [SECONDS]"
                + "\n       RdmaHost remote-access ADDRESS PORT NQN TARGET_PID"
                + "\n       RdmaHost fuzz ADDRESS PORT NQN [SECONDS [SEED [WORKERS]]]");
            System.exit(2);
        }
        if (!Rdma.isAvailable()) {
            System.out.println("RDMA unavailable: " + Rdma.unavailabilityCause());
            System.exit(2);
        }
        String mode = args[0];
        InetAddress address = InetAddress.getByName(args[1]);
        int port = Integer.parseInt(args[2]);
        String nqn = args[3];
        long seconds = args.length > 4 ? Long.parseLong(args[4]) : 0;
        if (mode.equals("fuzz")) {
            long seed = args.length > 5 ? Long.parseLong(args[5]) : System.nanoTime();
            int workers = args.length > 6 ? Integer.parseInt(args[6]) : 2;
            System.exit(new Fuzz(address, port, nqn, seconds > 0 ? seconds : 20, seed, workers).run());
        }
        Host host;
        try {
            host = Host.connect(address, port, nqn);
            result("connect", true, "admin + I/O queue (depth " + host.io.depth + ") connected, cntlid "
                + host.cntlid + ", " + host.hostnqn);
        } catch (RuntimeException e) {
            result("connect", false, e.toString());
            System.exit(1);
            return;
        }
        try {
            switch (mode) {
                case "multi-sgl" -> new DataCases(host).run();
                case "bad-sgl" -> new BadCases(host).run();
                case "all" -> {
                    new DataCases(host).run();
                    new BadCases(host).run();
                }
                case "stress" -> new Stress(host, seconds).run();
                case "remote-access" -> new RemoteAccess(host, address, port, nqn, seconds).run();
                case "stalled-host" -> new StalledHost(host, address, port, nqn, seconds).run();
                default -> result("mode", false, "unknown mode " + mode);
            }
        } catch (RuntimeException e) {
            result(mode + "-aborted", false, e.toString());
            e.printStackTrace(System.out);
        }
        host.close();
        System.out.printf("%d passed, %d failed%n", passed, failed);
        System.out.flush();
        System.exit(failed == 0 && passed > 0 ? 0 : 1);
    }

    static void result(String name, boolean ok, String detail) {
        if (ok) {
            passed++;
        } else {
            failed++;
        }
        System.out.println(name + " " + (ok ? "PASS" : "FAIL") + " " + detail);
        System.out.flush();
    }

    static String status(int s) {
        String name = switch (s) {
            case SUCCESS -> "SUCCESS";
            case INVALID_SGL_SEGMENT -> "INVALID_SGL_SEGMENT";
            case INVALID_SGL_COUNT -> "INVALID_SGL_COUNT";
            case DATA_SGL_LENGTH_INVALID -> "DATA_SGL_LENGTH_INVALID";
            case SGL_TYPE_INVALID -> "SGL_TYPE_INVALID";
            default -> "SCT " + ((s >> 8) & 7) + " SC 0x" + Integer.toHexString(s & 0xFF) + ((s & DNR) != 0 ? " DNR" : "");
        };
        return String.format("0x%04x %s", s, name);
    }

    static long check(long rc, String what) {
        if (rc < 0) {
            throw new IllegalStateException(what + ": " + Errno.describe((int) rc) + " (" + rc + ")");
        }
        return rc;
    }

    // ==================================================================== one queue pair

    /** A completion queue entry as it arrived. */
    record Cqe(int cid, int status, int dw0, int sqhd, int sqid) {
    }

    /**
     * One NVMe/RDMA queue pair of the host. Arena layout: {@code depth} capsules of 64 + 4096 bytes
     * (index = CID), {@code depth} response buffers of 64 bytes, then the data area. Single-threaded.
     */
    static final class Qp implements AutoCloseable {
        static final int CAPSULE = 64 + IN_CAPSULE;
        static final int RESPONSE = 64;
        static final long WR_RECV = 1L << 32;
        static final long WR_SEND = 2L << 32;
        static final long WR_WRITE = 3L << 32;

        final int qid;
        final int depth;
        /** Receives posted at connect (normally {@code depth}; a stalling host posts fewer). */
        int initialRecvs;
        /** The CM request's private data when not the valid nvme_rdma_cm_req (the fuzzer's). */
        byte[] privateData;
        final long channel;
        final long id;
        final CmEvent event = new CmEvent();
        long pd;
        long cq;
        long qp;
        long mr;
        int lkey;
        int rkey;
        HugepageArena arena;
        ByteBuffer mem;
        long base;
        final int responseBase;
        final int dataBase;
        final int dataSize;
        SendWorkRequests sends;
        RecvWorkRequests recvs;
        Completions wcs;
        boolean established;
        boolean lost;
        String lostReason;
        int crqsize;

        final boolean[] pending;
        final boolean[] sendDone;
        final boolean[] responded;
        final Cqe[] cqes;
        final int[] free;
        int freeTop;
        final int[] done;
        int doneHead;
        int doneCount;
        Runnable idleHook;
        /** SENDs posted and not yet completed (the stalling host's own count). */
        int inFlightSends;

        private Qp(int qid, int depth, int dataSize) {
            this.qid = qid;
            this.depth = depth;
            this.initialRecvs = depth;
            this.dataSize = dataSize;
            this.responseBase = depth * CAPSULE;
            this.dataBase = (responseBase + depth * RESPONSE + 4095) / 4096 * 4096;
            this.pending = new boolean[depth];
            this.sendDone = new boolean[depth];
            this.responded = new boolean[depth];
            this.cqes = new Cqe[depth];
            this.free = new int[depth];
            this.done = new int[depth];
            for (int i = depth - 1; i >= 0; i--) {
                free[freeTop++] = i;
            }
            this.channel = check(RdmaCm.createEventChannel(true), "rdma_create_event_channel");
            this.id = check(RdmaCm.createId(channel, RdmaCm.PS_TCP), "rdma_create_id");
        }

        /** CM connect of queue {@code qid} (hrqsize = depth, hsqsize = depth - 1). */
        static Qp connect(InetAddress address, int port, int qid, int depth, int dataSize, int cntlid) {
            return connect(address, port, qid, depth, dataSize, cntlid, depth);
        }

        static Qp connect(InetAddress address, int port, int qid, int depth, int dataSize, int cntlid, int recvs) {
            return connect(address, port, qid, depth, dataSize, cntlid, recvs, null);
        }

        /** As above with {@code privateData} (when not null) sent in the CM request instead of the valid one. */
        static Qp connect(InetAddress address, int port, int qid, int depth, int dataSize, int cntlid, int recvs,
                          byte[] privateData) {
            Qp q = new Qp(qid, depth, dataSize);
            q.initialRecvs = recvs;
            q.privateData = privateData;
            try {
                q.setUp(address, port, cntlid);
                return q;
            } catch (RuntimeException e) {
                q.close();
                throw new IllegalStateException("qid " + qid + " CM connect: " + e.getMessage(), e);
            }
        }

        private void setUp(InetAddress address, int port, int cntlid) {
            check(RdmaCm.resolveAddr(id, address, port, 2000), "rdma_resolve_addr");
            awaitEvent(RdmaCm.EVENT_ADDR_RESOLVED).ack();
            check(RdmaCm.resolveRoute(id, 2000), "rdma_resolve_route");
            awaitEvent(RdmaCm.EVENT_ROUTE_RESOLVED).ack();
            long ctx = RdmaCm.context(id);
            int responderResources = Math.max(1, Math.min(16, Rdma.queryDevice(ctx).maxQpRdAtom()));
            pd = check(Verbs.allocPd(ctx), "ibv_alloc_pd");
            cq = check(Verbs.createCq(ctx, 2 * depth + 8, 0, 0), "ibv_create_cq");
            QpCaps caps = new QpCaps();
            qp = check(Verbs.createQp(id, pd, cq, cq, 0, depth + 4, depth, 1, 1, 0, false, caps), "rdma_create_qp");
            int size = dataBase + dataSize;
            arena = HugepageArena.allocate(size, false);
            mem = arena.buffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);
            base = arena.address();
            mr = check(Verbs.regMr(pd, base, size,
                Verbs.ACCESS_LOCAL_WRITE | Verbs.ACCESS_REMOTE_READ | Verbs.ACCESS_REMOTE_WRITE), "ibv_reg_mr");
            lkey = Verbs.lkey(mr);
            rkey = Verbs.rkey(mr);
            sends = new SendWorkRequests(depth, 1);
            recvs = new RecvWorkRequests(depth, 1);
            wcs = new Completions(32);
            for (int i = 0; i < depth; i++) {
                recvs.set(i, WR_RECV | i, base + responseBase + (long) i * RESPONSE, RESPONSE, lkey);
            }
            check(Verbs.postRecv(qp, recvs, 0, initialRecvs), "posting " + initialRecvs + " receives");
            // nvme_rdma_cm_req: recfmt, qid, hrqsize, hsqsize, cntlid
            ByteBuffer req = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
            req.putShort(0, (short) 0).putShort(2, (short) qid).putShort(4, (short) depth)
                .putShort(6, (short) (depth - 1)).putShort(8, (short) cntlid);
            check(RdmaCm.connect(id, privateData != null ? privateData : req.array(), responderResources, 0, 7, 7),
                "rdma_connect");
            CmEvent ev = awaitEvent(-1);
            int type = ev.type();
            if (type != RdmaCm.EVENT_ESTABLISHED) {
                String what = RdmaCm.eventName(type) + " (status " + ev.status() + ")";
                if (type == RdmaCm.EVENT_REJECTED && ev.privateDataLength() >= 4) {
                    what += ", NVMe/RDMA reject sts " + Short.toUnsignedInt(ev.privateData()
                        .order(ByteOrder.LITTLE_ENDIAN).getShort(2));
                }
                ev.ack();
                throw new IllegalStateException("qid " + qid + ": connect answered with " + what);
            }
            if (ev.privateDataLength() >= 4) {
                crqsize = Short.toUnsignedInt(ev.privateData().order(ByteOrder.LITTLE_ENDIAN).getShort(2));
            }
            ev.ack();
            established = true;
            if (crqsize != 0 && crqsize < depth) {
                throw new IllegalStateException("qid " + qid + ": target queue depth " + crqsize + " < " + depth);
            }
        }

        /** The next CM event, which must be {@code type} (any if negative); un-acked. */
        CmEvent awaitEvent(int type) {
            return awaitEvent(type, TIMEOUT_MS);
        }

        CmEvent awaitEvent(int type, int timeoutMs) {
            long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            while (true) {
                int rc = RdmaCm.getEvent(channel, event);
                if (rc == 0) {
                    if (type >= 0 && event.type() != type) {
                        String got = RdmaCm.eventName(event.type()) + " status " + event.status();
                        event.ack();
                        throw new IllegalStateException("expected " + RdmaCm.eventName(type) + ", got " + got);
                    }
                    return event;
                }
                if (rc != -Errno.EAGAIN) {
                    throw new IllegalStateException("rdma_get_cm_event: " + Errno.describe(rc));
                }
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new IllegalStateException("timeout waiting for " + (type < 0 ? "a CM event"
                        : RdmaCm.eventName(type)));
                }
                Rdma.pollIn(RdmaCm.eventChannelFd(channel), (int) left);
            }
        }

        int alloc() {
            if (freeTop == 0) {
                throw new IllegalStateException("qid " + qid + ": no free command slot");
            }
            return free[--freeTop];
        }

        void release(int cid) {
            free[freeTop++] = cid;
        }

        /** Offset of the capsule (SQE) of {@code cid} in the arena; the in-capsule data follows at + 64. */
        int sqe(int cid) {
            return cid * CAPSULE;
        }

        /** Zeroes the SQE of {@code cid} and sets opcode, PSDT, CID. */
        int newSqe(int cid, int opcode) {
            int at = sqe(cid);
            for (int i = 0; i < 64; i += 8) {
                mem.putLong(at + i, 0);
            }
            mem.put(at, (byte) opcode).put(at + 1, (byte) PSDT_SGL).putShort(at + 2, (short) cid);
            return at;
        }

        /** SENDs the capsule of {@code cid}: the SQE and {@code inCapsule} bytes of data. */
        void submit(int cid, int inCapsule) {
            submitLength(cid, 64 + inCapsule);
        }

        /** SENDs {@code length} bytes from the capsule of {@code cid} (shorter or longer than a capsule too). */
        void submitLength(int cid, int length) {
            ensureAlive();
            if (pending[cid]) {
                throw new IllegalStateException("cid " + cid + " already outstanding");
            }
            pending[cid] = true;
            sendDone[cid] = false;
            responded[cid] = false;
            cqes[cid] = null;
            sends.setSend(cid, WR_SEND | cid, base + sqe(cid), length, lkey, Verbs.SEND_SIGNALED);
            int rc = Verbs.postSend(qp, sends, cid, 1);
            if (rc < 0) {
                pending[cid] = false;
                lose("ibv_post_send: " + Errno.describe(rc));
                ensureAlive();
            }
        }

        /** Polls the CQ and the CM channel once; finished commands go to the done ring. */
        int poll() {
            ensureAlive();
            int n = Verbs.pollCq(cq, wcs, wcs.capacity());
            if (n < 0) {
                lose("ibv_poll_cq: " + Errno.describe(n));
                ensureAlive();
            }
            for (int i = 0; i < n; i++) {
                long wrId = wcs.wrId(i);
                int index = (int) wrId;
                if (!wcs.isSuccess(i)) {
                    lose(((wrId & WR_RECV) != 0 ? "receive" : "send") + " completion failed: "
                        + Verbs.wcStatusName(wcs.status(i)) + " (vendor error 0x" + Integer.toHexString(wcs.vendorErr(i)) + ")");
                    continue;
                }
                if ((wrId & ~0xFFFFFFFFL) == WR_SEND) {
                    sendDone[index] = true;
                    finishIfDone(index);
                } else {
                    onResponse(index, wcs.byteLen(i));
                }
            }
            if (n == 0) {
                pollCm();
            }
            ensureAlive();
            return n;
        }

        private void onResponse(int r, int byteLen) {
            int at = responseBase + r * RESPONSE;
            int dw0 = mem.getInt(at);
            int sqhd = Short.toUnsignedInt(mem.getShort(at + 8));
            int sqid = Short.toUnsignedInt(mem.getShort(at + 10));
            int cid = Short.toUnsignedInt(mem.getShort(at + 12));
            int status = Short.toUnsignedInt(mem.getShort(at + 14)) >>> 1;
            int rc = Verbs.postRecv(qp, recvs, r, 1);
            if (rc < 0) {
                lose("reposting receive: " + Errno.describe(rc));
                return;
            }
            if (byteLen != 16) {
                lose("response of " + byteLen + " bytes, not 16");
                return;
            }
            if (cid >= depth || !pending[cid] || responded[cid]) {
                lose("response for cid " + cid + " that is not outstanding");
                return;
            }
            if (sqid != qid) {
                lose("response for cid " + cid + " names sqid " + sqid + ", not " + qid);
                return;
            }
            responded[cid] = true;
            cqes[cid] = new Cqe(cid, status, dw0, sqhd, sqid);
            finishIfDone(cid);
        }

        private void finishIfDone(int cid) {
            if (pending[cid] && sendDone[cid] && responded[cid]) {
                pending[cid] = false;
                done[(doneHead + doneCount++) % depth] = cid;
            }
        }

        /** Takes the next finished CID, or -1. */
        int takeDone() {
            if (doneCount == 0) {
                return -1;
            }
            int cid = done[doneHead];
            doneHead = (doneHead + 1) % depth;
            doneCount--;
            return cid;
        }

        /** Waits for command {@code cid} and returns its CQE (the CID leaves the done ring). */
        Cqe await(int cid) {
            long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
            int idle = 0;
            while (pending[cid]) {
                if (poll() == 0) {
                    if (idleHook != null) {
                        idleHook.run();
                    }
                    if (System.nanoTime() > deadline) {
                        // the queue is of no use after that: later cases must not wait again
                        lose("cid " + cid + ": no completion within " + TIMEOUT_MS + " ms (send done "
                            + sendDone[cid] + ", response " + responded[cid] + ")");
                        ensureAlive();
                    }
                    idle(++idle);
                } else {
                    idle = 0;
                }
            }
            for (int i = 0; i < doneCount; i++) {
                int at = (doneHead + i) % depth;
                if (done[at] == cid) {
                    // remove it from the ring, keeping the order of the others
                    for (int j = i; j > 0; j--) {
                        done[(doneHead + j) % depth] = done[(doneHead + j - 1) % depth];
                    }
                    doneHead = (doneHead + 1) % depth;
                    doneCount--;
                    break;
                }
            }
            return cqes[cid];
        }

        /** Submits, waits, releases: a command's CQE. */
        Cqe execute(int cid, int inCapsule) {
            submit(cid, inCapsule);
            try {
                return await(cid);
            } finally {
                release(cid);
            }
        }

        private void pollCm() {
            if (RdmaCm.getEvent(channel, event) == 0) {
                int type = event.type();
                event.ack();
                if (type == RdmaCm.EVENT_DISCONNECTED || type == RdmaCm.EVENT_DEVICE_REMOVAL
                    || type == RdmaCm.EVENT_TIMEWAIT_EXIT) {
                    lose("the target disconnected: " + RdmaCm.eventName(type));
                }
            }
        }

        private void lose(String reason) {
            if (!lost) {
                lost = true;
                lostReason = reason;
            }
        }

        void ensureAlive() {
            if (lost) {
                throw new IllegalStateException("qid " + qid + " lost: " + lostReason);
            }
        }

        long remote(int offset) {
            return base + offset;
        }

        /**
         * An RDMA WRITE of {@code length} bytes from this host's data area into the peer's memory at
         * {@code remote} with {@code rkey}: its completion status, or -1 without one within the timeout.
         */
        int rdmaWrite(long remote, int rkey, int length) {
            sends.setRdmaWrite(0, WR_WRITE, base + dataBase, length, lkey, remote, rkey, Verbs.SEND_SIGNALED);
            int rc = Verbs.postSend(qp, sends, 0, 1);
            if (rc < 0) {
                throw new IllegalStateException("posting the RDMA WRITE: " + Errno.describe(rc));
            }
            long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
            while (System.nanoTime() < deadline) {
                int n = Verbs.pollCq(cq, wcs, wcs.capacity());
                for (int i = 0; i < n; i++) {
                    if (wcs.wrId(i) == WR_WRITE) {
                        return wcs.status(i);
                    }
                }
                idle(100);
            }
            return -1;
        }

        private boolean closed;

        @Override
        public void close() {
            if (closed) {
                return; // a host closed by a case (remote-access) is closed again at exit
            }
            closed = true;
            if (established && !lost) {
                RdmaCm.disconnect(id);
                try {
                    awaitEvent(RdmaCm.EVENT_DISCONNECTED, 3000).ack();
                } catch (RuntimeException e) {
                    // the target did not answer the DREQ in time; tear down anyway
                }
            }
            if (qp > 0) {
                Verbs.destroyQp(id);
            }
            if (mr > 0) {
                Verbs.deregMr(mr);
            }
            if (cq > 0) {
                Verbs.destroyCq(cq);
            }
            if (pd > 0) {
                Verbs.deallocPd(pd);
            }
            RdmaCm.destroyId(id);
            RdmaCm.destroyEventChannel(channel);
            if (arena != null) {
                arena.close();
            }
            for (AutoCloseable c : new AutoCloseable[] {sends, recvs, wcs, event}) {
                try {
                    if (c != null) {
                        c.close();
                    }
                } catch (Exception e) {
                    // nothing to do at exit
                }
            }
        }
    }

    // ==================================================================== controller

    /** An admin queue and one I/O queue of one controller. */
    static final class Host implements AutoCloseable {
        final String subnqn;
        final String hostnqn;
        final byte[] hostid = new byte[16];
        Qp admin;
        Qp io;
        int cntlid;
        long lastKeepAlive;
        int keepAliveCid = -1;
        int keepAlives;

        private Host(String subnqn) {
            UUID u = UUID.randomUUID();
            this.subnqn = subnqn;
            this.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:" + u;
            ByteBuffer.wrap(hostid).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
        }

        static Host connect(InetAddress address, int port, String subnqn) {
            return connect(address, port, subnqn, 1);
        }

        /** A controller: its admin queue and {@code ioQueues} (0 or 1) I/O queue. */
        static Host connect(InetAddress address, int port, String subnqn, int ioQueues) {
            // data: two areas of 68 KiB per stress slot (write source, read destination)
            return connect(address, port, subnqn, ioQueues, 0, STRESS_QD * 2 * Stress.AREA);
        }

        /** As above with data areas of {@code adminData} and {@code ioData} bytes on the two queues. */
        static Host connect(InetAddress address, int port, String subnqn, int ioQueues, int adminData, int ioData) {
            Host h = new Host(subnqn);
            try {
                h.admin = Qp.connect(address, port, 0, ADMIN_DEPTH, adminData, 0xFFFF);
                Cqe c = h.fabricsConnect(h.admin, 0xFFFF);
                h.cntlid = c.dw0() & 0xFFFF;
                h.enable();
                h.lastKeepAlive = System.nanoTime();
                if (ioQueues == 0) {
                    return h;
                }
                h.io = Qp.connect(address, port, 1, IO_DEPTH, ioData, h.cntlid);
                h.fabricsConnect(h.io, h.cntlid);
                h.io.idleHook = h::tick;
                h.lastKeepAlive = System.nanoTime();
                return h;
            } catch (RuntimeException e) {
                h.close();
                throw e;
            }
        }

        /** Fabrics Connect with the connect data in the capsule (SGL Data Block, Offset). */
        Cqe fabricsConnect(Qp q, int cntlid) {
            int cid = q.alloc();
            int at = q.newSqe(cid, OPC_FABRICS);
            q.mem.put(at + 4, (byte) FCTYPE_CONNECT);
            q.mem.putLong(at + 24, 0).putInt(at + 32, 1024).put(at + 39, (byte) SGL_DATA_BLOCK_OFFSET);
            q.mem.putShort(at + 40, (short) 0).putShort(at + 42, (short) q.qid).putShort(at + 44, (short) (q.depth - 1))
                .put(at + 46, (byte) 0).putInt(at + 48, q.qid == 0 ? KATO_MS : 0);
            int d = at + 64;
            for (int i = 0; i < 1024; i += 8) {
                q.mem.putLong(d + i, 0);
            }
            q.mem.put(d, hostid).putShort(d + 16, (short) cntlid);
            q.mem.put(d + 256, subnqn.getBytes(StandardCharsets.US_ASCII));
            q.mem.put(d + 512, hostnqn.getBytes(StandardCharsets.US_ASCII));
            Cqe c = q.execute(cid, 1024);
            if (c.status() != SUCCESS) {
                throw new IllegalStateException("Fabrics Connect qid " + q.qid + ": " + status(c.status()));
            }
            return c;
        }

        Cqe property(boolean set, int offset, long value) {
            int cid = admin.alloc();
            int at = admin.newSqe(cid, OPC_FABRICS);
            admin.mem.put(at + 4, (byte) (set ? FCTYPE_PROPERTY_SET : FCTYPE_PROPERTY_GET));
            admin.mem.put(at + 40, (byte) 0).putInt(at + 44, offset).putLong(at + 48, value);
            return admin.execute(cid, 0);
        }

        void enable() {
            Cqe c = property(true, PROP_CC, 1 | (6 << 16) | (4 << 20));
            if (c.status() != SUCCESS) {
                throw new IllegalStateException("Property Set CC: " + status(c.status()));
            }
            long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
            while (System.nanoTime() < deadline) {
                c = property(false, PROP_CSTS, 0);
                if (c.status() == SUCCESS && (c.dw0() & 1) == 1) {
                    return;
                }
                sleep(10);
            }
            throw new IllegalStateException("CSTS.RDY did not become 1");
        }

        /** Keep Alive on the admin queue while I/O runs (never blocks). */
        void tick() {
            admin.poll();
            int cid;
            while ((cid = admin.takeDone()) >= 0) {
                Cqe c = admin.cqes[cid];
                admin.release(cid);
                if (cid == keepAliveCid) {
                    keepAliveCid = -1;
                    keepAlives++;
                    if (c.status() != SUCCESS) {
                        throw new IllegalStateException("Keep Alive: " + status(c.status()));
                    }
                }
            }
            long now = System.nanoTime();
            if (keepAliveCid < 0 && now - lastKeepAlive > KEEP_ALIVE_EVERY_MS * 1_000_000L) {
                lastKeepAlive = now;
                keepAliveCid = admin.alloc();
                int at = admin.newSqe(keepAliveCid, OPC_KEEP_ALIVE);
                keyed(admin.mem, at + 24, 0, 0, 0, SGL_KEYED); // no data: a null keyed descriptor
                admin.submit(keepAliveCid, 0);
            }
        }

        @Override
        public void close() {
            if (io != null) {
                io.close();
            }
            if (admin != null) {
                admin.close();
            }
        }
    }

    /** Spins a little, then yields the (shared, slow) guest CPU in 50 us naps. */
    static void idle(int emptyPolls) {
        if (emptyPolls < 50) {
            Thread.onSpinWait();
        } else {
            java.util.concurrent.locks.LockSupport.parkNanos(50_000);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A keyed data block descriptor: address u64 | length u24 | key u32 | id. */
    static void keyed(ByteBuffer b, int at, long address, int length, int key, int id) {
        b.putLong(at, address);
        b.put(at + 8, (byte) length).put(at + 9, (byte) (length >>> 8)).put(at + 10, (byte) (length >>> 16));
        b.putInt(at + 11, key);
        b.put(at + 15, (byte) id);
    }

    // ==================================================================== I/O with scattered descriptors

    /** Where a data transfer's pieces are: arena offsets and lengths, in transfer order. */
    record Layout(int[] offsets, int[] lengths) {
        int total() {
            return Arrays.stream(lengths).sum();
        }
    }

    /**
     * Places pieces of {@code lengths} (transfer order) in {@code [area, area + areaSize)} in a shuffled
     * order with odd gaps between them, so each descriptor points elsewhere and most addresses are
     * unaligned.
     */
    static Layout scatter(int[] lengths, int area, int areaSize, Random r) {
        int n = lengths.length;
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        java.util.Collections.shuffle(order, r);
        int[] offsets = new int[n];
        int pos = area + 1 + r.nextInt(63);
        for (int i : order) {
            offsets[i] = pos;
            pos += lengths[i] + 1 + r.nextInt(120);
        }
        if (pos > area + areaSize) {
            throw new IllegalArgumentException("pieces do not fit the area");
        }
        return new Layout(offsets, lengths);
    }

    /** {@code total} split into {@code n} positive random lengths. */
    static int[] split(int total, int n, Random r) {
        int[] cuts = new int[n + 1];
        cuts[n] = total;
        for (int i = 1; i < n; i++) {
            cuts[i] = 1 + r.nextInt(total - 1);
        }
        Arrays.sort(cuts, 1, n);
        int[] lengths = new int[n];
        for (int i = 0; i < n; i++) {
            lengths[i] = cuts[i + 1] - cuts[i];
            if (lengths[i] == 0) {
                return split(total, n, r); // a repeated cut: draw again
            }
        }
        return lengths;
    }

    /**
     * Builds a Read or Write of namespace 1 on {@code q} with SGL 1 either one keyed descriptor
     * ({@code list} false, one piece) or a Last Segment of keyed descriptors in the capsule at
     * {@code listOffset}. Returns the in-capsule data length.
     */
    static int buildRw(Qp q, int cid, int opcode, long slba, int nlb, Layout l, boolean list, int listOffset) {
        int at = q.newSqe(cid, opcode);
        q.mem.putInt(at + 4, NSID).putLong(at + 40, slba).putShort(at + 48, (short) (nlb - 1));
        int n = l.lengths().length;
        if (!list) {
            keyed(q.mem, at + 24, q.remote(l.offsets()[0]), l.lengths()[0], q.rkey, SGL_KEYED);
            return 0;
        }
        q.mem.putLong(at + 24, listOffset).putInt(at + 32, n * 16).put(at + 39, (byte) SGL_LAST_SEGMENT_OFFSET);
        for (int i = 0; i < listOffset; i++) {
            q.mem.put(at + 64 + i, (byte) 0xA5); // not descriptors: the target must start at the offset
        }
        for (int i = 0; i < n; i++) {
            keyed(q.mem, at + 64 + listOffset + i * 16, q.remote(l.offsets()[i]), l.lengths()[i], q.rkey, SGL_KEYED);
        }
        return listOffset + n * 16;
    }

    static int rw(Host h, int opcode, long slba, int nlb, Layout l, boolean list, int listOffset) {
        Qp q = h.io;
        int cid = q.alloc();
        int icd = buildRw(q, cid, opcode, slba, nlb, l, list, listOffset);
        return q.execute(cid, icd).status();
    }

    static void put(Qp q, Layout l, byte[] data) {
        int from = 0;
        for (int i = 0; i < l.offsets().length; i++) {
            q.mem.put(l.offsets()[i], data, from, l.lengths()[i]);
            from += l.lengths()[i];
        }
    }

    static byte[] gather(Qp q, Layout l) {
        byte[] out = new byte[l.total()];
        int to = 0;
        for (int i = 0; i < l.offsets().length; i++) {
            q.mem.get(l.offsets()[i], out, to, l.lengths()[i]);
            to += l.lengths()[i];
        }
        return out;
    }

    static final byte FILL = (byte) 0xEE;

    static final byte[] FILL_BYTES = filled(DataCases.AREA);

    static byte[] filled(int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, FILL);
        return b;
    }

    static void fill(Qp q, int area, int size) {
        q.mem.put(area, FILL_BYTES, 0, size);
    }

    /** Bytes of {@code [area, area + size)} outside the pieces that are no longer {@link #FILL}. */
    static int stray(Qp q, int area, int size, Layout l) {
        boolean[] inside = new boolean[size];
        for (int i = 0; i < l.offsets().length; i++) {
            Arrays.fill(inside, l.offsets()[i] - area, l.offsets()[i] - area + l.lengths()[i], true);
        }
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (!inside[i] && q.mem.get(area + i) != FILL) {
                n++;
            }
        }
        return n;
    }

    static int firstDifference(byte[] a, byte[] b) {
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) {
            if (a[i] != b[i]) {
                return i;
            }
        }
        return a.length == b.length ? -1 : n;
    }

    // ==================================================================== mode multi-sgl

    /** Correct multi-descriptor writes and reads, compared byte for byte. */
    static final class DataCases {
        static final int AREA = 160 * 1024;
        final Host h;
        final Qp q;
        final int writeArea;
        final int readArea;
        final Random r = new Random();

        DataCases(Host h) {
            this.h = h;
            this.q = h.io;
            this.writeArea = q.dataBase;
            this.readArea = q.dataBase + AREA;
        }

        void run() {
            long lba = 1024 + (r.nextInt(64) * 2048L); // a fresh place per run
            roundTrip("sgl-4desc-write-4desc-read", lba, new int[] {4096, 8192, 512, 3584}, true,
                new int[][] {{512, 1536, 10240, 4096}, {16384}}, 0);
            roundTrip("sgl-16desc-write-16desc-read", lba + 256, new int[] {
                4096, 1, 511, 8192, 3000, 1096, 7, 4089, 12288, 2048, 2048, 1000, 3096, 4096, 8192, 11_776},
                true, new int[][] {{2048, 2048, 2048, 2048, 4096, 4096, 4096, 4096, 8192, 8192, 8192, 5000, 3192,
                    1, 1, 8190}, {65536}}, 0);
            roundTrip("sgl-16desc-at-mdts", lba + 512, fill16(MDTS), true,
                new int[][] {{1, 32767, 32768, 32768, 32768}, {MDTS}}, 0);
            roundTrip("sgl-list-at-capsule-offset", lba + 1024, new int[] {2048, 2048, 4096}, true,
                new int[][] {{1024, 7168}, {8192}}, 48);
            roundTrip("sgl-1desc-last-segment", lba + 1280, new int[] {8192}, true, new int[][] {{8192}}, 0);
            roundTrip("sgl-single-keyed", lba + 1536, new int[] {8192}, false,
                new int[][] {{8192}, {1000, 3000, 4192}}, 0);
        }

        static int[] fill16(int total) {
            int[] l = new int[16];
            Arrays.fill(l, total / 16);
            return l;
        }

        /**
         * Writes {@code lengths} (a list SGL when {@code list}, else one keyed descriptor) at {@code slba},
         * then reads back once per {@code reads} split (a one-piece split is sent as one keyed
         * descriptor, for contrast), each time into freshly filled, scattered places.
         */
        void roundTrip(String name, long slba, int[] lengths, boolean list, int[][] reads, int listOffset) {
            try {
                Layout w = scatter(lengths, writeArea, AREA, r);
                int total = w.total();
                int nlb = total / BLOCK;
                byte[] data = new byte[total];
                r.nextBytes(data);
                put(q, w, data);
                int s = rw(h, OPC_WRITE, slba, nlb, w, list, listOffset);
                if (s != SUCCESS) {
                    result(name, false, "write of " + total + " B with " + lengths.length + " descriptors: " + status(s));
                    return;
                }
                StringBuilder detail = new StringBuilder();
                detail.append("wrote ").append(total).append(" B at LBA ").append(slba).append(" with ")
                    .append(list ? lengths.length + "-descriptor Last Segment" + (listOffset > 0 ? " at capsule offset "
                        + listOffset : "") : "one keyed descriptor").append(" ").append(Arrays.toString(lengths));
                for (int[] split : reads) {
                    fill(q, readArea, AREA);
                    Layout rl = scatter(split, readArea, AREA, r);
                    boolean readList = split.length > 1 || (list && lengths.length == 1);
                    s = rw(h, OPC_READ, slba, nlb, rl, readList, readList ? listOffset : 0);
                    if (s != SUCCESS) {
                        result(name, false, detail + "; read with " + split.length + " descriptors: " + status(s));
                        return;
                    }
                    byte[] back = gather(q, rl);
                    int diff = firstDifference(data, back);
                    int stray = stray(q, readArea, AREA, rl);
                    if (diff >= 0 || stray > 0) {
                        result(name, false, detail + "; read with " + split.length + " descriptors "
                            + Arrays.toString(split) + ": " + (diff >= 0 ? "first difference at byte " + diff : "")
                            + (stray > 0 ? " " + stray + " bytes written outside the descriptors" : ""));
                        return;
                    }
                    detail.append("; read back equal with ").append(readList ? split.length + " descriptors (the target "
                        + "RDMA-WROTE each) " + Arrays.toString(split) : "one keyed descriptor");
                }
                result(name, true, detail + "; no byte outside the descriptors touched");
            } catch (RuntimeException e) {
                result(name, false, e.toString());
                q.ensureAlive();
            }
        }
    }

    // ==================================================================== mode bad-sgl

    /** SGLs the target must refuse, with the exact status; good I/O on the same queue after each. */
    static final class BadCases {
        static final int AREA = 64 * 1024;
        final Host h;
        final Qp q;
        final Random r = new Random();
        final long slba;
        final byte[] known = new byte[4096];
        final int area;

        BadCases(Host h) {
            this.h = h;
            this.q = h.io;
            this.area = q.dataBase + 2 * DataCases.AREA;
            this.slba = 200_000 + r.nextInt(64) * 64L;
        }

        void run() {
            // the blocks every bad write aims at hold a known pattern; after each case they must still
            r.nextBytes(known);
            Layout l = scatter(new int[] {1024, 3072}, area, AREA, r);
            put(q, l, known);
            int s = rw(h, OPC_WRITE, slba, 8, l, true, 0);
            if (s != SUCCESS) {
                result("bad-sgl-setup", false, "writing the known pattern: " + status(s));
                return;
            }
            // 17 descriptors: more than MSDBD
            bad("bad-sgl-17-descriptors", OPC_WRITE, INVALID_SGL_COUNT, cid -> list(cid, OPC_WRITE,
                split(4096, 17, r), 0, 17 * 16, 17 * 16));
            bad("bad-sgl-17-descriptors-read", OPC_READ, INVALID_SGL_COUNT, cid -> list(cid, OPC_READ,
                split(4096, 17, r), 0, 17 * 16, 17 * 16));
            // Last Segment length not a multiple of 16 (40 of 48 bytes sent)
            bad("bad-sgl-segment-length-not-16x", OPC_WRITE, INVALID_SGL_SEGMENT, cid -> list(cid, OPC_WRITE,
                new int[] {1024, 1024, 2048}, 0, 40, 48));
            bad("bad-sgl-segment-length-0", OPC_WRITE, INVALID_SGL_SEGMENT, cid -> list(cid, OPC_WRITE,
                new int[] {4096}, 0, 0, 16));
            // Last Segment longer than the in-capsule data: 4 descriptors announced, 3 sent
            bad("bad-sgl-segment-beyond-capsule-data", OPC_WRITE, INVALID_SGL_SEGMENT, cid -> list(cid, OPC_WRITE,
                new int[] {1024, 1024, 1024, 1024}, 0, 64, 48));
            bad("bad-sgl-segment-beyond-capsule-data-read", OPC_READ, INVALID_SGL_SEGMENT, cid -> list(cid, OPC_READ,
                new int[] {1024, 1024, 1024, 1024}, 0, 64, 48));
            // the list at an offset that leaves it half outside the capsule data
            bad("bad-sgl-segment-offset-beyond-capsule-data", OPC_WRITE, INVALID_SGL_SEGMENT, cid -> list(cid,
                OPC_WRITE, new int[] {2048, 2048}, 32, 32, 48));
            // descriptor lengths that do not add up to NLB * 512 = 4096
            bad("bad-sgl-lengths-short-write", OPC_WRITE, DATA_SGL_LENGTH_INVALID, cid -> list(cid, OPC_WRITE,
                new int[] {1024, 1024, 1536}, 0, 48, 48));
            bad("bad-sgl-lengths-over-write", OPC_WRITE, DATA_SGL_LENGTH_INVALID, cid -> list(cid, OPC_WRITE,
                new int[] {1024, 1024, 2560}, 0, 48, 48));
            bad("bad-sgl-lengths-short-read", OPC_READ, DATA_SGL_LENGTH_INVALID, cid -> list(cid, OPC_READ,
                new int[] {1024, 1024, 1536}, 0, 48, 48));
            bad("bad-sgl-lengths-over-read", OPC_READ, DATA_SGL_LENGTH_INVALID, cid -> list(cid, OPC_READ,
                new int[] {2048, 2048, 1}, 0, 48, 48));
            bad("bad-sgl-keyed-length-short", OPC_WRITE, DATA_SGL_LENGTH_INVALID, cid -> single(cid, OPC_WRITE,
                4095, SGL_KEYED));
            // SGL descriptor types the target does not take
            bad("bad-sgl-type-unknown", OPC_WRITE, SGL_TYPE_INVALID, cid -> single(cid, OPC_WRITE, 4096, 0xE0));
            bad("bad-sgl-type-unknown-read", OPC_READ, SGL_TYPE_INVALID, cid -> single(cid, OPC_READ, 4096, 0xE0));
            bad("bad-sgl-type-segment", OPC_WRITE, SGL_TYPE_INVALID, cid -> {
                int icd = list(cid, OPC_WRITE, new int[] {2048, 2048}, 0, 32, 32);
                q.mem.put(q.sqe(cid) + 39, (byte) SGL_SEGMENT_OFFSET);
                return icd;
            });
            bad("bad-sgl-last-segment-address-subtype", OPC_WRITE, SGL_TYPE_INVALID, cid -> {
                int icd = list(cid, OPC_WRITE, new int[] {2048, 2048}, 0, 32, 32);
                q.mem.put(q.sqe(cid) + 39, (byte) SGL_LAST_SEGMENT_ADDRESS);
                return icd;
            });
            bad("bad-sgl-unknown-type-in-list", OPC_WRITE, SGL_TYPE_INVALID, cid -> {
                int icd = list(cid, OPC_WRITE, new int[] {2048, 1024, 1024}, 0, 48, 48);
                q.mem.put(q.sqe(cid) + 64 + 16 + 15, (byte) 0xE0);
                return icd;
            });
            bad("bad-sgl-data-block-in-list", OPC_WRITE, SGL_TYPE_INVALID, cid -> {
                int icd = list(cid, OPC_WRITE, new int[] {2048, 1024, 1024}, 0, 48, 48);
                q.mem.put(q.sqe(cid) + 64 + 32 + 15, (byte) SGL_DATA_BLOCK_OFFSET);
                return icd;
            });
        }

        interface Build {
            int build(int cid);
        }

        /**
         * A Read/Write of 8 blocks at {@link #slba} with a Last Segment of keyed descriptors for
         * {@code lengths} (into scattered places, carrying other data than the known pattern); the
         * segment descriptor says {@code segLength} bytes at {@code segOffset}, the capsule carries
         * {@code icd} bytes of in-capsule data.
         */
        int list(int cid, int opcode, int[] lengths, int segOffset, int segLength, int icd) {
            Layout l = scatter(lengths, area, AREA, r);
            byte[] other = new byte[l.total()];
            r.nextBytes(other);
            put(q, l, other);
            int at = q.newSqe(cid, opcode);
            q.mem.putInt(at + 4, NSID).putLong(at + 40, slba).putShort(at + 48, (short) 7);
            q.mem.putLong(at + 24, segOffset).putInt(at + 32, segLength).put(at + 39, (byte) SGL_LAST_SEGMENT_OFFSET);
            for (int i = 0; i < IN_CAPSULE && i < icd + 16 * lengths.length + 64; i++) {
                q.mem.put(at + 64 + i, (byte) 0);
            }
            for (int i = 0; i < lengths.length; i++) {
                keyed(q.mem, at + 64 + segOffset + i * 16, q.remote(l.offsets()[i]), lengths[i], q.rkey, SGL_KEYED);
            }
            return icd;
        }

        /** A Read/Write of 8 blocks with SGL 1 a single descriptor of {@code length} and identifier {@code id}. */
        int single(int cid, int opcode, int length, int id) {
            Layout l = scatter(new int[] {length}, area, AREA, r);
            int at = q.newSqe(cid, opcode);
            q.mem.putInt(at + 4, NSID).putLong(at + 40, slba).putShort(at + 48, (short) 7);
            keyed(q.mem, at + 24, q.remote(l.offsets()[0]), length, q.rkey, id);
            return 0;
        }

        void bad(String name, int opcode, int expected, Build b) {
            String good;
            try {
                int cid = q.alloc();
                int icd = b.build(cid);
                Cqe c = q.execute(cid, icd);
                good = goodIo();
                boolean ok = c.status() == expected && good == null;
                result(name, ok, (opcode == OPC_WRITE ? "write" : "read") + ": status " + status(c.status())
                    + (c.status() == expected ? " as expected" : ", expected " + status(expected))
                    + (good == null ? "; then on the same queue: the blocks still hold the known pattern, and a "
                    + "3-descriptor write + 2-descriptor read round trip is equal" : "; then good I/O failed: " + good));
            } catch (RuntimeException e) {
                result(name, false, e.toString());
                q.ensureAlive();
            }
        }

        /** Null when the known blocks read back unchanged and a fresh round trip elsewhere is equal. */
        String goodIo() {
            fill(q, area, AREA);
            Layout rl = scatter(new int[] {512, 2560, 1024}, area, AREA, r);
            int s = rw(h, OPC_READ, slba, 8, rl, true, 0);
            if (s != SUCCESS) {
                return "read of the known blocks: " + status(s);
            }
            int diff = firstDifference(known, gather(q, rl));
            if (diff >= 0) {
                return "the known blocks changed (first difference at byte " + diff + ")";
            }
            byte[] data = new byte[8192];
            r.nextBytes(data);
            Layout w = scatter(new int[] {4096, 1000, 3096}, area, AREA, r);
            put(q, w, data);
            s = rw(h, OPC_WRITE, slba + 64, 16, w, true, 0);
            if (s != SUCCESS) {
                return "write: " + status(s);
            }
            fill(q, area, AREA);
            rl = scatter(new int[] {5000, 3192}, area, AREA, r);
            s = rw(h, OPC_READ, slba + 64, 16, rl, true, 0);
            if (s != SUCCESS) {
                return "read: " + status(s);
            }
            diff = firstDifference(data, gather(q, rl));
            return diff < 0 ? null : "read back differs at byte " + diff;
        }
    }

    // ==================================================================== mode stress

    /** QD 32 random writes, each read back and verified, with 1-16 descriptors each way. */
    static final class Stress {
        static final int MAX = 64 * 1024;
        /** Per slot and direction: the largest transfer plus the gaps of 16 scattered pieces. */
        static final int AREA = MAX + 4096;
        static final long REGION = NS_BLOCKS / STRESS_QD;
        final Host h;
        final Qp q;
        final long seconds;
        /** Run when the queue is idle, besides the keep-alive (another host's housekeeping), or null. */
        Runnable alsoOnIdle;
        /** The case name of the result line. */
        String name = "stress";
        /** Longest time without a completion (ns); more than {@link #TIMEOUT_MS} fails the run. */
        long longestGapNanos;
        final Random r = new Random();
        final byte[][] expected = new byte[STRESS_QD][];
        final long[] slba = new long[STRESS_QD];
        final boolean[] reading = new boolean[STRESS_QD];
        final Layout[] layout = new Layout[STRESS_QD];
        long writes;
        long reads;
        long bytes;
        long descriptors;

        Stress(Host h, long seconds) {
            this.h = h;
            this.q = h.io;
            this.seconds = seconds;
        }

        int writeArea(int slot) {
            return q.dataBase + slot * 2 * AREA;
        }

        int readArea(int slot) {
            return writeArea(slot) + AREA;
        }

        void run() {
            long start = System.nanoTime();
            long lastReport = start;
            boolean announced = false;
            int[] cids = new int[STRESS_QD];
            int[] slotOf = new int[q.depth];
            for (int s = 0; s < STRESS_QD; s++) {
                cids[s] = q.alloc();
                slotOf[cids[s]] = s;
                startWrite(s, cids[s]);
            }
            int empty = 0;
            long lastCompletion = System.nanoTime();
            while (true) {
                if (q.poll() == 0) {
                    h.tick();
                    if (alsoOnIdle != null) {
                        alsoOnIdle.run();
                    }
                    idle(++empty);
                    long gap = System.nanoTime() - lastCompletion;
                    longestGapNanos = Math.max(longestGapNanos, gap);
                    if (gap > TIMEOUT_MS * 1_000_000L) {
                        result(name, false, "no completion for " + TIMEOUT_MS + " ms after " + writes + " writes, "
                            + reads + " verified reads");
                        return;
                    }
                } else {
                    empty = 0;
                    lastCompletion = System.nanoTime();
                }
                int cid;
                while ((cid = q.takeDone()) >= 0) {
                    int s = slotOf[cid];
                    Cqe c = q.cqes[cid];
                    if (c.status() != SUCCESS) {
                        fail(s, (reading[s] ? "read" : "write") + " failed: " + status(c.status()));
                    }
                    if (reading[s]) {
                        byte[] back = gather(q, layout[s]);
                        int diff = firstDifference(expected[s], back);
                        if (diff >= 0) {
                            fail(s, "read back differs at byte " + diff + " of " + back.length);
                        }
                        reads++;
                        startWrite(s, cid);
                    } else {
                        writes++;
                        startRead(s, cid);
                    }
                }
                long now = System.nanoTime();
                if (!announced && reads >= 2 * STRESS_QD) {
                    announced = true;
                    System.out.println("running: QD " + STRESS_QD + ", " + writes + " writes and " + reads
                        + " verified reads so far");
                    System.out.flush();
                }
                if (now - lastReport > 5_000_000_000L) {
                    lastReport = now;
                    report(start, now);
                }
                if (seconds > 0 && now - start > seconds * 1_000_000_000L) {
                    report(start, now);
                    result(name, true, writes + " writes, " + reads + " reads verified, " + (bytes >> 20)
                        + " MiB, " + descriptors + " keyed descriptors at QD " + STRESS_QD + " in " + seconds + " s"
                        + "; longest time without a completion " + longestGapNanos / 1_000_000 + " ms");
                    return;
                }
            }
        }

        void report(long start, long now) {
            System.out.printf("progress %d s: %d writes, %d verified reads, %d MiB, %d descriptors, %d keep-alives%n",
                (now - start) / 1_000_000_000L, writes, reads, bytes >> 20, descriptors, h.keepAlives);
            System.out.flush();
        }

        void fail(int slot, String what) {
            result(name, false, "slot " + slot + " LBA " + slba[slot] + " (" + expected[slot].length + " B): "
                + what + " after " + writes + " writes, " + reads + " reads");
            System.exit(1);
        }

        void startWrite(int s, int cid) {
            int nlb = (4096 + r.nextInt(MAX - 4096 + 1)) / BLOCK;
            int len = nlb * BLOCK;
            slba[s] = s * REGION + r.nextInt((int) (REGION - nlb + 1));
            expected[s] = new byte[len];
            r.nextBytes(expected[s]);
            int n = 1 + r.nextInt(MSDBD);
            layout[s] = scatter(split(len, n, r), writeArea(s), AREA, r);
            put(q, layout[s], expected[s]);
            reading[s] = false;
            submit(s, cid, OPC_WRITE, nlb, n);
        }

        void startRead(int s, int cid) {
            int len = expected[s].length;
            int n = 1 + r.nextInt(MSDBD);
            fill(q, readArea(s), AREA);
            layout[s] = scatter(split(len, n, r), readArea(s), AREA, r);
            reading[s] = true;
            submit(s, cid, OPC_READ, len / BLOCK, n);
        }

        void submit(int s, int cid, int opcode, int nlb, int n) {
            boolean list = n > 1 || r.nextBoolean();
            int icd = buildRw(q, cid, opcode, slba[s], nlb, layout[s], list, 0);
            q.submit(cid, icd);
            bytes += (long) nlb * BLOCK;
            descriptors += n;
        }
    }

    // ==================================================================== mode remote-access

    /**
     * A connected host that knows the keys and addresses of the target's registered regions issues RDMA
     * WRITEs into them. The target registers them for local access only, so each must fail with a remote
     * access error (and the host's QP goes to the error state); then a fresh host must pass the data
     * cases. How the host learns the keys: it is not guessed here, it is read where a privileged observer
     * of the target machine finds it (standing in for a guess of the small soft-RoCE key space or a leak):
     * {@code rdma res show mr} (keys and length of every MR of the target process's threads) and
     * {@code /proc/PID/maps} (the mapping of that length: the region's address). A region the host cannot
     * pair with one mapping is tried against every candidate, each on a fresh connection (a failed WRITE
     * kills the QP). RDMA READs are not tried: the target accepts with responder resources 0, so the
     * host's QP gets no READ credit and the target's QP none to serve one (an IB/RoCE READ cannot reach
     * the region whatever its access flags).
     */
    static final class RemoteAccess {
        final Host first;
        final InetAddress address;
        final int port;
        final String nqn;
        final long pid;

        record Mr(int rkey, int lkey, long length) {
        }

        RemoteAccess(Host first, InetAddress address, int port, String nqn, long pid) {
            this.first = first;
            this.address = address;
            this.port = port;
            this.nqn = nqn;
            this.pid = pid;
        }

        void run() {
            List<Mr> mrs;
            List<long[]> maps;
            try {
                mrs = regions();
                maps = mappings(mrs);
            } catch (Exception e) {
                result("remote-access-keys", false, "learning the target's keys: " + e);
                return;
            }
            if (mrs.isEmpty() || maps.isEmpty()) {
                result("remote-access-keys", false, "pid " + pid + ": " + mrs.size() + " large MRs, " + maps.size()
                    + " mappings of their length");
                return;
            }
            StringBuilder d = new StringBuilder();
            for (Mr m : mrs) {
                d.append(String.format(" [rkey 0x%x lkey 0x%x %d B]", m.rkey(), m.lkey(), m.length()));
            }
            for (long[] m : maps) {
                d.append(String.format(" [mapping 0x%x + %d]", m[0], m[1]));
            }
            result("remote-access-keys", true, "target pid " + pid + ": regions" + d);
            Host h = first;
            int attempt = 0;
            for (Mr m : mrs) {
                // the key a host would use: the rkey, or where the region grants none (rkey 0) the lkey,
                // which on soft-RoCE and mlx5 is the same number the rkey would have been
                int key = m.rkey() != 0 ? m.rkey() : m.lkey();
                for (long[] map : maps) {
                    if (map[1] < m.length()) {
                        continue;
                    }
                    attempt++;
                    if (h == null) {
                        h = Host.connect(address, port, nqn);
                    }
                    // the last 4 KiB of the region: the data buffer the target hands out last
                    long remote = map[0] + m.length() - 4096;
                    int status = h.io.rdmaWrite(remote, key, 4096);
                    String what = String.format("RDMA WRITE of 4096 B to 0x%x (region 0x%x + %d) with key 0x%x",
                        remote, map[0], m.length(), key);
                    if (status == Verbs.WC_SUCCESS) {
                        result("remote-write-" + attempt, false, what + " succeeded: the host wrote into the "
                            + "target's registered memory");
                    } else {
                        result("remote-write-" + attempt, status == Verbs.WC_REM_ACCESS_ERR, what + ": "
                            + (status < 0 ? "no completion" : Verbs.wcStatusName(status)) + " (the host's QP is in"
                            + " the error state now)");
                    }
                    h.io.lost = true;
                    h.close();
                    h = null;
                }
            }
            // the target carries on: a fresh host on a fresh connection
            Host fresh = Host.connect(address, port, nqn);
            int before = failed;
            new DataCases(fresh).run();
            result("remote-access-target-serves", failed == before, "after " + attempt + " remote WRITE attempts a "
                + "fresh host passed the data cases");
            fresh.close();
        }

        /** The target's large MRs ({@code rdma res show mr}: rkey, lkey, mrlen of pid). */
        List<Mr> regions() throws Exception {
            Process p = new ProcessBuilder("rdma", "res", "show", "mr").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            p.waitFor();
            List<Mr> mrs = new ArrayList<>();
            for (String line : out.split("\n")) {
                String[] t = line.trim().split("\\s+");
                java.util.Map<String, String> f = new java.util.HashMap<>();
                for (int i = 0; i + 1 < t.length; i += 2) {
                    f.put(t[i], t[i + 1]);
                }
                // the pid rdma shows is the registering thread's: a task of the target process
                if (!f.containsKey("pid") || !f.containsKey("mrlen") || !f.containsKey("lkey")
                    || !java.nio.file.Files.exists(java.nio.file.Path.of("/proc/" + pid + "/task/" + f.get("pid")))) {
                    continue;
                }
                long len = Long.parseLong(f.get("mrlen"));
                if (len >= 1 << 20) { // the poll groups' regions, not the small response slots
                    mrs.add(new Mr(key(f.get("rkey")), key(f.get("lkey")), len));
                }
            }
            if (mrs.isEmpty()) {
                throw new IllegalStateException("no MR of 1 MiB or more for pid " + pid + " in: " + out.trim());
            }
            return mrs;
        }

        static int key(String v) {
            if (v == null) {
                return 0;
            }
            return (int) Long.parseLong(v.startsWith("0x") ? v.substring(2) : v, 16);
        }

        /** Mappings of the target whose length is an MR's, rounded to 4 KiB or 2 MiB: start, length. */
        List<long[]> mappings(List<Mr> mrs) throws Exception {
            List<long[]> out = new ArrayList<>();
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/" + pid + "/maps"))) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                long start = Long.parseUnsignedLong(range[0], 16);
                long length = Long.parseUnsignedLong(range[1], 16) - start;
                for (Mr m : mrs) {
                    if (length == roundUp(m.length(), 4096) || length == roundUp(m.length(), 2 << 20)) {
                        out.add(new long[] {start, length});
                        break;
                    }
                }
            }
            return out;
        }

        static long roundUp(long v, long unit) {
            return (v + unit - 1) / unit * unit;
        }
    }

    // ==================================================================== mode stalled-host

    /**
     * One host stalls, another keeps doing verified I/O on the same poll groups. The stalled host opens
     * {@link #QUEUES} I/O queues of depth 128 with one receive posted (for the Connect's response) and
     * never posts another, then sends Flushes: the target's response SENDs meet receiver-not-ready, every
     * request slot stays taken, and further capsules wait in the poll group's shared receive buffers. On
     * the first {@link #HEAVY} queues it sends {@code slots + 128} capsules (two of them on one poll group
     * would take all 256 shared receive buffers, starving every other queue pair there), on the others
     * {@code slots + 4} (only the finite RNR retry count frees those). The target must disconnect every
     * stalled queue pair, and the other host's QD 32 verified I/O must run for SECONDS without a stop of
     * more than the host timeout (its longest gap is printed).
     */
    static final class StalledHost {
        static final int QUEUES = 6;
        static final int HEAVY = 4;
        static final int DEPTH = 128;
        static final int SLOTS = DEPTH + 4 + 1; // the target's request slots: depth + AERL + 1
        final Host victim;
        final InetAddress address;
        final int port;
        final String nqn;
        final long seconds;
        Host stalled;
        final List<Qp> queues = new ArrayList<>();
        final int[] sent = new int[QUEUES];
        final int[] want = new int[QUEUES];
        final long[] closedAt = new long[QUEUES];
        final String[] closedHow = new String[QUEUES];
        long start;

        StalledHost(Host victim, InetAddress address, int port, String nqn, long seconds) {
            this.victim = victim;
            this.address = address;
            this.port = port;
            this.nqn = nqn;
            this.seconds = seconds > 0 ? seconds : 20;
        }

        void run() {
            try {
                stalled = Host.connect(address, port, nqn, 0);
                for (int i = 0; i < QUEUES; i++) {
                    Qp q = Qp.connect(address, port, 1 + i, DEPTH, 0, stalled.cntlid, 1);
                    queues.add(q);
                    stalled.fabricsConnect(q, stalled.cntlid);
                    want[i] = SLOTS + (i < HEAVY ? 128 : 4);
                }
            } catch (RuntimeException e) {
                result("stalled-host-connect", false, e.toString());
                return;
            }
            result("stalled-host-connect", true, "a second host, cntlid " + stalled.cntlid + ": " + QUEUES
                + " I/O queues of depth " + DEPTH + " with no receive posted after the Connect");
            start = System.nanoTime();
            long lastProgress = start;
            while (System.nanoTime() - lastProgress < 3_000_000_000L) {
                boolean progress = false;
                for (int i = 0; i < QUEUES; i++) {
                    progress |= flood(i);
                }
                stallTick();
                if (progress) {
                    lastProgress = System.nanoTime();
                } else {
                    idle(100);
                }
                if (allSent()) {
                    break;
                }
            }
            StringBuilder d = new StringBuilder();
            for (int i = 0; i < QUEUES; i++) {
                d.append(" qid ").append(queues.get(i).qid).append(": ").append(sent[i]).append('/').append(want[i]);
            }
            System.out.println("stalled host sent (capsules posted / planned):" + d);
            Stress s = new Stress(victim, seconds);
            s.name = "stalled-host-victim-io";
            s.alsoOnIdle = this::stallTick;
            s.run();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!allClosed() && System.nanoTime() < deadline) {
                stallTick();
                idle(100);
            }
            for (int i = 0; i < QUEUES; i++) {
                Qp q = queues.get(i);
                String kind = i < HEAVY ? "heavy (" + (want[i] - SLOTS) + " capsules beyond the slots)"
                    : "light (" + (want[i] - SLOTS) + " beyond the slots)";
                result("stalled-host-qid" + q.qid + "-disconnected", closedHow[i] != null, kind + ", sent " + sent[i]
                    + (closedHow[i] != null ? "; the target ended it " + (closedAt[i] - start) / 1_000_000 + " ms after"
                    + " the stall began: " + closedHow[i] : "; still connected " + (System.nanoTime() - start)
                    / 1_000_000_000L + " s after the stall began"));
            }
            for (Qp q : queues) {
                q.lost = true; // never wait for a DREQ answer from a stalled queue
                q.close();
            }
            stalled.close();
        }

        boolean allSent() {
            for (int i = 0; i < QUEUES; i++) {
                if (sent[i] < want[i] && closedHow[i] == null) {
                    return false;
                }
            }
            return true;
        }

        boolean allClosed() {
            for (String c : closedHow) {
                if (c == null) {
                    return false;
                }
            }
            return true;
        }

        /** Posts Flushes on queue {@code i} while its send queue has room; true when one was posted. */
        boolean flood(int i) {
            Qp q = queues.get(i);
            if (closedHow[i] != null || sent[i] >= want[i]) {
                return false;
            }
            boolean posted = false;
            while (sent[i] < want[i] && q.inFlightSends < DEPTH) {
                int cid = sent[i] % DEPTH;
                int at = q.newSqe(cid, 0x00); // Flush, no data
                q.mem.putInt(at + 4, NSID);
                keyed(q.mem, at + 24, 0, 0, 0, SGL_KEYED);
                q.sends.setSend(cid, Qp.WR_SEND | cid, q.base + q.sqe(cid), 64, q.lkey, Verbs.SEND_SIGNALED);
                if (Verbs.postSend(q.qp, q.sends, cid, 1) < 0) {
                    closed(i, "ibv_post_send failed (QP in the error state)");
                    return posted;
                }
                q.inFlightSends++;
                sent[i]++;
                posted = true;
            }
            return posted;
        }

        /** The stalled host's housekeeping: keep-alive, its send completions (never a receive), CM events. */
        void stallTick() {
            stalled.tick();
            for (int i = 0; i < QUEUES; i++) {
                if (closedHow[i] != null) {
                    continue;
                }
                Qp q = queues.get(i);
                int n = Verbs.pollCq(q.cq, q.wcs, q.wcs.capacity());
                for (int k = 0; k < n; k++) {
                    if ((q.wcs.wrId(k) & ~0xFFFFFFFFL) == Qp.WR_SEND) {
                        q.inFlightSends--;
                    }
                    if (!q.wcs.isSuccess(k)) {
                        closed(i, "a capsule SEND completed with " + Verbs.wcStatusName(q.wcs.status(k)));
                        break;
                    }
                }
                if (closedHow[i] == null && RdmaCm.getEvent(q.channel, q.event) == 0) {
                    int type = q.event.type();
                    q.event.ack();
                    if (type == RdmaCm.EVENT_DISCONNECTED || type == RdmaCm.EVENT_TIMEWAIT_EXIT) {
                        closed(i, "CM " + RdmaCm.eventName(type));
                    }
                }
            }
        }

        void closed(int i, String how) {
            if (closedHow[i] == null) {
                closedHow[i] = how;
                closedAt[i] = System.nanoTime();
            }
        }
    }

    // ==================================================================== live fuzzer

    /**
     * Mode {@code fuzz}: the live RDMA fuzzer (issue 15), the NVMe/RDMA side of nvmf-target's
     * {@code io.nvmf4j.fuzz.LiveFuzz}, with its byte mutator ({@code io.nvmf4j.fuzz.Mutator}). For SECONDS,
     * WORKERS threads run cases, each on fresh queue pairs of its own controller:
     * <ul>
     * <li>{@code cm-private-data}: CM connects with mutated nvme_rdma_cm_req private data (a bad recfmt, qid,
     *     hrqsize or hsqsize, or the block mutated byte by byte); an established one sends a Fabrics Connect;</li>
     * <li>{@code mutated-admin}, {@code mutated-io}: a valid connect, then capsules built from valid commands
     *     (Identify, Get Log Page, features, Property Get; Read, Write with keyed or in-capsule data, Flush,
     *     Write Zeroes, Dataset Management) and mutated (opcodes, SGL types, lengths, keys, offsets; truncated
     *     and extended SENDs), the CID kept;</li>
     * <li>{@code bad-sgl}: a Read or Write with a keyed SGL naming a wrong rkey, an address outside the host's
     *     region, a length beyond MDTS or unlike the blocks, an undefined SGL type, in-capsule data beyond the
     *     capsule, or an oversized SEND (longer than the target's receive buffers);</li>
     * <li>{@code keep-alive-flood}, {@code aer-flood}: the admin queue filled with Keep Alives round after
     *     round; far more Asynchronous Event Requests than AERL, left outstanding at the disconnect;</li>
     * <li>{@code extra-queues}: I/O queue connects with qids beyond the granted ones, and duplicates;</li>
     * <li>{@code vanish}: up to 16 Writes and Reads of 64 KiB in flight, then the queue pairs destroyed
     *     without a disconnect.</li>
     * </ul>
     * After mutated or bad capsules a Keep Alive must be answered, or the connection be gone (the target
     * disconnected, or work requests failed): neither within {@link #LIVENESS_MS} is a hang, as is a CM connect
     * or a Fabrics Connect of a valid host left without an answer. A response the host cannot match (unknown
     * CID, not 16 bytes, another SQID) is a protocol error. Exit 0 clean, 1 on a hang or a protocol error.
     */
    static final class Fuzz {
        static final String[] SCENARIOS = {"cm-private-data", "mutated-admin", "mutated-io", "bad-sgl",
            "keep-alive-flood", "aer-flood", "extra-queues", "vanish"};
        static final int LIVENESS_MS = 30_000;
        static final int ADMIN_DATA = 4096;
        static final int IO_DATA = 16 * 65536;
        static final int OPC_FLUSH = 0x00;
        static final int OPC_WRITE_ZEROES = 0x08;
        static final int OPC_DSM = 0x09;
        static final int OPC_GET_LOG_PAGE = 0x02;
        static final int OPC_IDENTIFY = 0x06;
        static final int OPC_SET_FEATURES = 0x09;
        static final int OPC_GET_FEATURES = 0x0A;
        static final int OPC_AER = 0x0C;

        /** A valid step (a connect, a Keep Alive) left without an answer. */
        static final class Hang extends RuntimeException {
            Hang(String message) {
                super(message);
            }
        }

        final InetAddress address;
        final int port;
        final String nqn;
        final long seconds;
        final long seed;
        final int workers;
        final AtomicBoolean stop = new AtomicBoolean();
        final LongAdder cases = new LongAdder();
        final LongAdder connects = new LongAdder();
        final LongAdder capsules = new LongAdder();
        final LongAdder succeeded = new LongAdder();
        final LongAdder errorStatus = new LongAdder();
        final LongAdder cmRejects = new LongAdder();
        final LongAdder refusedValid = new LongAdder();
        final LongAdder lost = new LongAdder();
        final LongAdder vanished = new LongAdder();
        final LongAdder hangs = new LongAdder();
        final LongAdder protocolErrors = new LongAdder();
        final LongAdder[] perScenario = new LongAdder[SCENARIOS.length];
        final List<String> problems = new ArrayList<>();

        Fuzz(InetAddress address, int port, String nqn, long seconds, long seed, int workers) {
            this.address = address;
            this.port = port;
            this.nqn = nqn;
            this.seconds = seconds;
            this.seed = seed;
            this.workers = workers;
            Arrays.setAll(perScenario, i -> new LongAdder());
        }

        synchronized void problem(String p) {
            System.out.println("rdma-fuzz: PROBLEM: " + p);
            if (problems.size() < 20) {
                problems.add(p);
            }
        }

        int run() throws InterruptedException {
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                long workerSeed = seed + 0x9E3779B97F4A7C15L * (w + 1);
                Thread t = new Thread(() -> worker(workerSeed), "rdma-fuzz-" + w);
                threads.add(t);
                t.start();
            }
            long start = System.nanoTime();
            long end = start + seconds * 1_000_000_000L;
            while (System.nanoTime() < end) {
                Thread.sleep(Math.min(10_000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
                System.out.printf("rdma-fuzz: %d s: %d cases, %d connects, %d capsules, %d hangs%n",
                    (System.nanoTime() - start) / 1_000_000_000L, cases.sum(), connects.sum(), capsules.sum(), hangs.sum());
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join(2L * LIVENESS_MS + 30_000);
                if (t.isAlive()) {
                    problem(t.getName() + " still in a case " + (2 * LIVENESS_MS + 30_000) / 1000 + " s after the end");
                }
            }
            StringBuilder per = new StringBuilder();
            for (int i = 0; i < SCENARIOS.length; i++) {
                per.append(i == 0 ? "" : ", ").append(SCENARIOS[i]).append(' ').append(perScenario[i].sum());
            }
            System.out.printf(java.util.Locale.ROOT, "rdma-fuzz: %d cases in %.0f s (seed %d, %d workers): %s%n",
                cases.sum(), (System.nanoTime() - start) / 1e9, seed, workers, per);
            System.out.printf("rdma-fuzz: %d CM connects, %d capsules sent; answers: %d successes, %d error statuses, "
                + "%d CM rejects, %d valid connects refused, %d connections lost (target disconnect or failed work "
                + "requests), %d vanished by the fuzzer; %d protocol errors, %d hangs%n", connects.sum(), capsules.sum(),
                succeeded.sum(), errorStatus.sum(), cmRejects.sum(), refusedValid.sum(), lost.sum(), vanished.sum(),
                protocolErrors.sum(), hangs.sum());
            if (cases.sum() == 0) {
                problem("no case ran");
            }
            System.out.println("rdma-fuzz: " + (problems.isEmpty() ? "clean" : problems.size() + " problem(s)"));
            System.out.flush();
            return problems.isEmpty() ? 0 : 1;
        }

        void worker(long workerSeed) {
            SplittableRandom r = new SplittableRandom(workerSeed);
            while (!stop.get()) {
                int s = r.nextInt(SCENARIOS.length);
                long caseSeed = r.nextLong();
                cases.increment();
                perScenario[s].increment();
                try {
                    runCase(s, new SplittableRandom(caseSeed));
                } catch (Hang h) {
                    hangs.increment();
                    problem("hang in " + SCENARIOS[s] + " (case seed " + caseSeed + "): " + h.getMessage());
                } catch (RuntimeException e) {
                    problem("unexpected in " + SCENARIOS[s] + " (case seed " + caseSeed + "): " + e);
                }
            }
        }

        void runCase(int scenario, SplittableRandom r) {
            switch (scenario) {
                case 0 -> cmPrivateData(r);
                case 1 -> mutated(r, false);
                case 2 -> mutated(r, true);
                case 3 -> badSgl(r);
                case 4 -> keepAliveFlood(r);
                case 5 -> aerFlood(r);
                case 6 -> extraQueues(r);
                default -> vanish(r);
            }
        }

        static boolean timedOut(RuntimeException e) {
            String m = String.valueOf(e.getMessage());
            return m.contains("timeout waiting for") || m.contains("no completion within");
        }

        /** A valid controller: admin queue and {@code ioQueues} (0 or 1) I/O queue; null when refused. */
        Host connectValid(int ioQueues) {
            connects.add(1 + ioQueues);
            try {
                return Host.connect(address, port, nqn, ioQueues, ADMIN_DATA, IO_DATA);
            } catch (RuntimeException e) {
                if (timedOut(e)) {
                    throw new Hang("valid connect: " + e.getMessage());
                }
                refusedValid.increment();
                return null;
            }
        }

        /** Runs {@code body} on a valid controller (if one is granted), then closes it with {@link #finish}. */
        void withHost(int ioQueues, java.util.function.Consumer<Host> body) {
            Host h = connectValid(ioQueues);
            if (h == null) {
                return;
            }
            try {
                body.accept(h);
            } finally {
                finish(h);
            }
        }

        /** Sends a command without data ({@code opcode}, a null keyed SGL); false when the queue is lost. */
        boolean sendNoData(Qp q, int opcode) {
            int cid = q.alloc();
            int at = q.newSqe(cid, opcode);
            keyed(q.mem, at + 24, 0, 0, 0, SGL_KEYED);
            try {
                q.submit(cid, 0);
            } catch (IllegalStateException e) {
                return false;
            }
            capsules.increment();
            return true;
        }

        /** Closes the host, counting losses and flagging responses that broke the protocol. */
        void finish(Host h) {
            for (Qp q : new Qp[] {h.admin, h.io}) {
                if (q != null && q.lost) {
                    lost.increment();
                    if (q.lostReason.startsWith("response")) {
                        protocolErrors.increment();
                        problem("qid " + q.qid + ": " + q.lostReason);
                    }
                }
            }
            h.close();
        }

        void count(Cqe c) {
            if (c.status() == SUCCESS) {
                succeeded.increment();
            } else {
                errorStatus.increment();
            }
        }

        /** Takes finished commands of {@code q} for up to {@code ms}, or until none is outstanding. */
        void drain(Qp q, int ms) {
            long deadline = System.nanoTime() + ms * 1_000_000L;
            int idle = 0;
            while (!q.lost && q.freeTop < q.depth && System.nanoTime() < deadline) {
                try {
                    idle = q.poll() > 0 ? 0 : idle + 1;
                } catch (IllegalStateException e) {
                    return;
                }
                int cid;
                while ((cid = q.takeDone()) >= 0) {
                    count(q.cqes[cid]);
                    q.release(cid);
                }
                idle(idle);
            }
        }

        /** Waits until every command sent on {@code q} is answered or the queue is lost; neither is a hang. */
        void answeredOrLost(Qp q, int outstandingAllowed, String what) {
            drain(q, LIVENESS_MS);
            if (!q.lost && q.depth - q.freeTop > outstandingAllowed) {
                throw new Hang(what + ": " + (q.depth - q.freeTop) + " commands neither answered nor the queue lost in "
                    + LIVENESS_MS / 1000 + " s");
            }
        }

        /** A Keep Alive on the admin queue must be answered, or the admin queue be gone. */
        void liveness(Host h, int outstandingAllowed) {
            Qp q = h.admin;
            drain(q, 200);
            if (q.lost || q.freeTop == 0) {
                return;
            }
            int cid = q.free[q.freeTop - 1]; // the CID sendNoData takes
            if (!sendNoData(q, OPC_KEEP_ALIVE)) {
                return; // lost meanwhile
            }
            long deadline = System.nanoTime() + LIVENESS_MS * 1_000_000L;
            int idle = 0;
            while (!q.lost && q.pending[cid]) {
                try {
                    idle = q.poll() > 0 ? 0 : idle + 1;
                } catch (IllegalStateException e) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new Hang("Keep Alive after the case neither answered nor the admin queue lost in "
                        + LIVENESS_MS / 1000 + " s (" + (q.depth - q.freeTop - 1 - outstandingAllowed) + " more commands"
                        + " outstanding)");
                }
                idle(idle);
            }
            drain(q, 100);
        }

        void cmPrivateData(SplittableRandom r) {
            int qid = r.nextInt(4) == 0 ? 1 + r.nextInt(9) : 0;
            int depth = qid == 0 ? ADMIN_DEPTH : 32;
            ByteBuffer req = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
            req.putShort(2, (short) qid).putShort(4, (short) depth).putShort(6, (short) (depth - 1))
                .putShort(8, (short) 0xFFFF);
            byte[] pd;
            int kind = r.nextInt(6);
            int[] sizes = {0, 1, 2, depth + 1, 0x7FFF, 0xFFFF, 4096, depth - 2};
            switch (kind) {
                case 0 -> req.putShort(0, (short) (1 + r.nextInt(0xFFFF))); // recfmt
                case 1 -> req.putShort(2, (short) (r.nextBoolean() ? 9 + r.nextInt(0xFFF7) : r.nextInt(9))); // qid
                case 2 -> req.putShort(4, (short) sizes[r.nextInt(sizes.length)]); // hrqsize
                case 3 -> req.putShort(6, (short) sizes[r.nextInt(sizes.length)]); // hsqsize
                default -> { // mutated below
                }
            }
            pd = kind < 4 ? req.array() : io.nvmf4j.fuzz.Mutator.mutate(req.array(), r, 56);
            connects.increment();
            // the queue is the one the private data names: its answers carry that SQID (and so does the Connect)
            int sent = pd.length >= 4 ? (pd[2] & 0xFF) | (pd[3] & 0xFF) << 8 : qid;
            Qp q;
            try {
                q = Qp.connect(address, port, sent, depth, 0, 0xFFFF, depth, pd);
            } catch (RuntimeException e) {
                if (timedOut(e)) {
                    throw new Hang("CM request with private data " + hex(pd) + ": " + e.getMessage());
                }
                cmRejects.increment();
                return;
            }
            Host h = new Host(nqn);
            h.admin = q;
            try {
                h.fabricsConnect(q, 0xFFFF);
                succeeded.increment();
            } catch (RuntimeException e) {
                if (timedOut(e) && !q.lost) {
                    h.close();
                    throw new Hang("Fabrics Connect on a queue accepted with private data " + hex(pd) + ": "
                        + e.getMessage());
                }
                errorStatus.increment();
            }
            finish(h);
        }

        static String hex(byte[] b) {
            StringBuilder sb = new StringBuilder();
            for (byte x : b) {
                sb.append(String.format("%02x", x));
            }
            return sb.toString();
        }

        /** A valid admin command in the capsule of {@code cid}; returns its in-capsule data length. */
        static int adminTemplate(Qp q, int cid, SplittableRandom r) {
            int at;
            switch (r.nextInt(6)) {
                case 0 -> {
                    at = q.newSqe(cid, OPC_IDENTIFY);
                    int cns = new int[] {0, 1, 2, 3}[r.nextInt(4)];
                    q.mem.putInt(at + 4, cns == 1 || cns == 2 ? 0 : NSID).putInt(at + 40, cns);
                    keyed(q.mem, at + 24, q.remote(q.dataBase), 4096, q.rkey, SGL_KEYED);
                }
                case 1 -> {
                    at = q.newSqe(cid, OPC_GET_LOG_PAGE);
                    int lid = new int[] {1, 2, 3, 4}[r.nextInt(4)];
                    q.mem.putInt(at + 4, 0xFFFFFFFF).putInt(at + 40, lid | ((512 / 4 - 1) << 16));
                    keyed(q.mem, at + 24, q.remote(q.dataBase), 512, q.rkey, SGL_KEYED);
                }
                case 2 -> {
                    at = q.newSqe(cid, OPC_GET_FEATURES);
                    q.mem.putInt(at + 40, new int[] {0x06, 0x07, 0x0B, 0x0F}[r.nextInt(4)]);
                    keyed(q.mem, at + 24, 0, 0, 0, SGL_KEYED);
                }
                case 3 -> {
                    at = q.newSqe(cid, OPC_SET_FEATURES);
                    q.mem.putInt(at + 40, 0x0B).putInt(at + 44, r.nextInt());
                    keyed(q.mem, at + 24, 0, 0, 0, SGL_KEYED);
                }
                case 4 -> {
                    at = q.newSqe(cid, OPC_FABRICS);
                    q.mem.put(at + 4, (byte) FCTYPE_PROPERTY_GET).put(at + 40, (byte) (r.nextBoolean() ? 1 : 0))
                        .putInt(at + 44, new int[] {0x00, 0x08, PROP_CC, PROP_CSTS}[r.nextInt(4)]);
                }
                default -> {
                    at = q.newSqe(cid, OPC_KEEP_ALIVE);
                    keyed(q.mem, at + 24, 0, 0, 0, SGL_KEYED);
                }
            }
            return 0;
        }

        /** A valid I/O command on namespace 1 in the capsule of {@code cid}; returns its in-capsule data length. */
        static int ioTemplate(Qp q, int cid, SplittableRandom r) {
            int nlb = 1 + r.nextInt(8);
            long slba = r.nextInt(4096);
            int kind = r.nextInt(6);
            int opcode = switch (kind) {
                case 0, 1 -> OPC_WRITE;
                case 2 -> OPC_READ;
                case 3 -> OPC_FLUSH;
                case 4 -> OPC_WRITE_ZEROES;
                default -> OPC_DSM;
            };
            int at = q.newSqe(cid, opcode);
            q.mem.putInt(at + 4, NSID);
            int icd = 0;
            int slot = (cid % 16) * 65536;
            switch (kind) {
                case 0 -> { // in-capsule data
                    icd = nlb * BLOCK;
                    q.mem.putLong(at + 40, slba).putShort(at + 48, (short) (nlb - 1));
                    q.mem.putLong(at + 24, 0).putInt(at + 32, icd).put(at + 39, (byte) SGL_DATA_BLOCK_OFFSET);
                    for (int i = 0; i < icd; i += 8) {
                        q.mem.putLong(at + 64 + i, r.nextLong());
                    }
                }
                case 1, 2 -> {
                    q.mem.putLong(at + 40, slba).putShort(at + 48, (short) (nlb - 1));
                    keyed(q.mem, at + 24, q.remote(q.dataBase + slot), nlb * BLOCK, q.rkey, SGL_KEYED);
                }
                case 4 -> {
                    q.mem.putLong(at + 40, slba).putShort(at + 48, (short) (nlb - 1));
                    keyed(q.mem, at + 24, 0, 0, 0, SGL_KEYED);
                }
                case 5 -> { // one range, deallocate, in the capsule
                    icd = 16;
                    q.mem.putInt(at + 40, 0).putInt(at + 44, 1 << 2);
                    q.mem.putLong(at + 24, 0).putInt(at + 32, icd).put(at + 39, (byte) SGL_DATA_BLOCK_OFFSET);
                    q.mem.putInt(at + 64, 0).putInt(at + 68, nlb).putLong(at + 72, slba);
                }
                default -> keyed(q.mem, at + 24, 0, 0, 0, SGL_KEYED);
            }
            return icd;
        }

        void mutated(SplittableRandom r, boolean onIo) {
            withHost(onIo ? 1 : 0, h -> {
                Qp q = onIo ? h.io : h.admin;
                int n = 1 + r.nextInt(12);
                for (int i = 0; i < n && !q.lost; i++) {
                    int cid = q.alloc();
                    int at = q.sqe(cid);
                    int icd = onIo ? ioTemplate(q, cid, r) : adminTemplate(q, cid, r);
                    byte[] valid = new byte[64 + icd];
                    q.mem.get(at, valid);
                    byte[] m = io.nvmf4j.fuzz.Mutator.mutate(valid, r, Qp.CAPSULE);
                    q.mem.put(at, m);
                    if (m.length >= 4) {
                        q.mem.putShort(at + 2, (short) cid); // the CID kept: answers stay matchable
                    }
                    try {
                        q.submitLength(cid, Math.max(1, m.length));
                    } catch (IllegalStateException e) {
                        break;
                    }
                    capsules.increment();
                }
                drain(q, 1000);
                // AERs and commands the target dropped with their connection may stay outstanding
                liveness(h, onIo ? 0 : 12);
            });
        }

        void badSgl(SplittableRandom r) {
            withHost(1, h -> {
                Qp q = h.io;
                int cid = q.alloc();
                int at = q.newSqe(cid, r.nextBoolean() ? OPC_WRITE : OPC_READ);
                q.mem.putInt(at + 4, NSID).putLong(at + 40, r.nextInt(4096)).putShort(at + 48, (short) 7);
                long addr = q.remote(q.dataBase);
                int length = 8 * BLOCK;
                int send = 64;
                switch (r.nextInt(7)) {
                    case 0 -> keyed(q.mem, at + 24, addr, length, q.rkey ^ (1 + r.nextInt(0xFFFF)), SGL_KEYED);
                    case 1 -> keyed(q.mem, at + 24, r.nextBoolean() ? addr + q.dataSize + 4096 : addr - (1L << 30),
                        length, q.rkey, SGL_KEYED);
                    case 2 -> {
                        q.mem.putShort(at + 48, (short) (r.nextBoolean() ? 0xFFFF : 2 * MDTS / BLOCK - 1));
                        keyed(q.mem, at + 24, addr, r.nextBoolean() ? 0xFFFFFF : 2 * MDTS, q.rkey, SGL_KEYED);
                    }
                    case 3 -> keyed(q.mem, at + 24, addr, length, q.rkey, ((5 + r.nextInt(10)) << 4) | r.nextInt(16));
                    case 4 -> { // in-capsule data beyond the capsule
                        int off = r.nextBoolean() ? 0 : IN_CAPSULE - BLOCK;
                        int len = r.nextBoolean() ? IN_CAPSULE + BLOCK : 2 * BLOCK + r.nextInt(8) * BLOCK;
                        q.mem.putLong(at + 24, off).putInt(at + 32, len).put(at + 39, (byte) SGL_DATA_BLOCK_OFFSET);
                        send = 64 + Math.min(IN_CAPSULE, off + len);
                    }
                    case 5 -> { // an oversized capsule: more than the target's receive buffer holds
                        q.mem.putLong(at + 24, 0).putInt(at + 32, length).put(at + 39, (byte) SGL_DATA_BLOCK_OFFSET);
                        send = Qp.CAPSULE + 1 + r.nextInt(4096);
                    }
                    default -> keyed(q.mem, at + 24, addr, length - BLOCK * (1 + r.nextInt(7)), q.rkey, SGL_KEYED);
                }
                try {
                    q.submitLength(cid, send);
                    capsules.increment();
                } catch (IllegalStateException e) {
                    return;
                }
                answeredOrLost(q, 0, "bad SGL");
                liveness(h, 0);
            });
        }

        void keepAliveFlood(SplittableRandom r) {
            withHost(0, h -> {
                Qp q = h.admin;
                int rounds = 3 + r.nextInt(20);
                for (int round = 0; round < rounds && !q.lost; round++) {
                    while (q.freeTop > 0 && sendNoData(q, OPC_KEEP_ALIVE)) {
                        // the whole queue
                    }
                    answeredOrLost(q, 0, "Keep Alive flood round " + round);
                }
            });
        }

        void aerFlood(SplittableRandom r) {
            withHost(0, h -> {
                int n = 8 + r.nextInt(ADMIN_DEPTH - 10);
                for (int i = 0; i < n && sendNoData(h.admin, OPC_AER); i++) {
                    // far more than AERL
                }
                drain(h.admin, 2000);
                // AERL + 1 of them stay outstanding; the rest are answered (limit exceeded)
                liveness(h, 16);
            });
        }

        void extraQueues(SplittableRandom r) {
            Host h = connectValid(0);
            if (h == null) {
                return;
            }
            List<Qp> extra = new ArrayList<>();
            try {
                int n = 1 + r.nextInt(4);
                int last = 1;
                for (int i = 0; i < n; i++) {
                    int qid = i > 0 && r.nextInt(3) == 0 ? last : 1 + r.nextInt(12);
                    last = qid;
                    connects.increment();
                    Qp q;
                    try {
                        q = Qp.connect(address, port, qid, 32, 0, h.cntlid);
                    } catch (RuntimeException e) {
                        if (timedOut(e)) {
                            throw new Hang("CM connect of I/O queue " + qid + ": " + e.getMessage());
                        }
                        cmRejects.increment();
                        continue;
                    }
                    extra.add(q);
                    try {
                        h.fabricsConnect(q, h.cntlid);
                        succeeded.increment();
                    } catch (RuntimeException e) {
                        if (timedOut(e) && !q.lost) {
                            throw new Hang("Fabrics Connect of I/O queue " + qid + ": " + e.getMessage());
                        }
                        errorStatus.increment();
                    }
                }
                liveness(h, 0);
            } finally {
                for (Qp q : extra) {
                    if (q.lost) {
                        lost.increment();
                    }
                    q.close();
                }
                finish(h);
            }
        }

        void vanish(SplittableRandom r) {
            Host h = connectValid(1);
            if (h == null) {
                return;
            }
            Qp q = h.io;
            int n = 1 + r.nextInt(16);
            for (int i = 0; i < n && !q.lost; i++) {
                int cid = q.alloc();
                int at = q.newSqe(cid, r.nextBoolean() ? OPC_WRITE : OPC_READ);
                q.mem.putInt(at + 4, NSID).putLong(at + 40, (long) r.nextInt(1024) * 128).putShort(at + 48, (short) 127);
                keyed(q.mem, at + 24, q.remote(q.dataBase + (cid % 16) * 65536), 65536, q.rkey, SGL_KEYED);
                try {
                    q.submit(cid, 0);
                } catch (IllegalStateException e) {
                    break;
                }
                capsules.increment();
            }
            int polls = r.nextInt(50);
            for (int i = 0; i < polls && !q.lost; i++) {
                try {
                    q.poll();
                } catch (IllegalStateException e) {
                    break;
                }
            }
            // destroyed without a disconnect: close() sends no DREQ for a queue it takes as not established
            vanished.increment();
            h.admin.established = false;
            q.established = false;
            h.close();
        }
    }
}
