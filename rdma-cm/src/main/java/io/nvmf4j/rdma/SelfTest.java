package io.nvmf4j.rdma;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The binding's device checks, runnable without JUnit inside the e2e guest (soft-RoCE):
 *
 * <pre>java -cp native/target/classes:rdma-cm/target/classes io.nvmf4j.rdma.SelfTest [ADDRESS [BASE_PORT]]</pre>
 *
 * Both ends live in this process, each on its own event channel, CQ and PD: a "target" that
 * listens with an SRQ-backed QP and an armed CQ, and a "host" that connects. ADDRESS is an IP
 * of a netdev with an RDMA device (default: the first IPv4 address of such a netdev). Prints one
 * PASS/FAIL line per check; exits 0 when all pass, 1 when one fails, 2 when RDMA is unavailable.
 * {@code RdmaDeviceTest} runs the same checks under JUnit.
 */
public final class SelfTest {
    static final int TIMEOUT_MS = 5000;
    private static final int BUF = 4096;
    private static final int RECVS = 8;

    private SelfTest() {
    }

    public static void main(String[] args) throws Exception {
        if (!Rdma.isAvailable()) {
            System.out.println("SKIP rdma-cm self-test: " + Rdma.unavailabilityCause());
            System.exit(2);
        }
        InetAddress address = args.length > 0 ? InetAddress.getByName(args[0]) : defaultAddress();
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 20_000 + (int) (ProcessHandle.current().pid() % 10_000);
        System.out.println("rdma-cm self-test on " + address.getHostAddress() + " (library: " + Rdma.libraryOrigin() + ")");
        Map<String, Check> checks = new LinkedHashMap<>();
        checks.put("device-attributes", () -> checkDeviceAttributes());
        checks.put("cm-connect-accept-disconnect", () -> checkConnectAcceptDisconnect(address, port));
        checks.put("cm-reject-with-private-data", () -> checkReject(address, port + 1));
        checks.put("send-recv-srq-inline-unsignalled", () -> checkSendRecv(address, port + 2));
        checks.put("rdma-read-write-chained-send", () -> checkRdmaReadWrite(address, port + 3));
        checks.put("cq-interrupt-arm-wait", () -> checkInterrupt(address, port + 4));
        checks.put("qp-error-flushes", () -> checkFlush(address, port + 5));
        checks.put("destroy-qp-without-qp", () -> checkDestroyQpWithoutQp(address, port + 6));
        int failed = 0;
        for (Map.Entry<String, Check> c : checks.entrySet()) {
            long t0 = System.nanoTime();
            try {
                c.getValue().run();
                System.out.printf("PASS %s (%d ms)%n", c.getKey(), (System.nanoTime() - t0) / 1_000_000);
            } catch (Throwable t) {
                failed++;
                System.out.printf("FAIL %s: %s%n", c.getKey(), t);
                t.printStackTrace(System.out);
            }
        }
        System.out.printf("rdma-cm self-test: %d passed, %d failed%n", checks.size() - failed, failed);
        System.exit(failed == 0 ? 0 : 1);
    }

    interface Check {
        void run() throws Exception;
    }

    // ---------------------------------------------------------------- the checks

    /** Every device answers ibv_query_device / ibv_query_port with sane limits. */
    static void checkDeviceAttributes() {
        long[] contexts = Rdma.deviceContexts();
        check(contexts.length > 0, "rdma_get_devices returned no context");
        for (long ctx : contexts) {
            DeviceAttributes d = Rdma.queryDevice(ctx);
            System.out.println("  " + Rdma.deviceName(ctx) + ": " + d);
            check(d.maxQpWr() > 0 && d.maxSge() > 0 && d.maxCqe() > 0, "device limits " + d);
            check(d.physPortCnt() >= 1, "no port");
            PortAttributes p = Rdma.queryPort(ctx, 1);
            System.out.println("  " + Rdma.deviceName(ctx) + " " + p);
            check(p.activeMtuBytes() >= 256, "mtu " + p);
        }
    }

    /** CONNECT_REQUEST carries the host's private data; ESTABLISHED carries ours; disconnect reaches both. */
    static void checkConnectAcceptDisconnect(InetAddress address, int port) throws Exception {
        try (Pair p = Pair.connect(address, port)) {
            check(p.requestLength >= 32, "private data length " + p.requestLength);
            check(p.acceptedLength >= 32, "accept private data length " + p.acceptedLength);
            check(p.hostInitiatorDepthSeen >= 1, "target saw initiator_depth " + p.hostInitiatorDepthSeen);
            check(RdmaCm.address(p.target.id, true) != null, "peer address");
            // the host's DREQ reaches the target as DISCONNECTED; the target's own disconnect
            // answers it (DREP), and only then does the host see DISCONNECTED
            check(RdmaCm.disconnect(p.host.id) == 0, "host disconnect");
            p.target.await(RdmaCm.EVENT_DISCONNECTED).ack();
            check(RdmaCm.disconnect(p.target.id) == 0, "target disconnect");
            p.host.await(RdmaCm.EVENT_DISCONNECTED).ack();
        }
    }

    /** A reject's private data (NVMe/RDMA: recfmt, sts) reaches the connecting side with REJECTED. */
    static void checkReject(InetAddress address, int port) throws Exception {
        try (Side target = Side.listen(address, port); Side host = Side.resolve(address, port)) {
            host.createQp(0, false);
            check(RdmaCm.connect(host.id, pattern(32, 7), 4, 0, 7, 7) == 0, "connect");
            CmEvent req = target.await(RdmaCm.EVENT_CONNECT_REQUEST);
            long id = req.id();
            byte[] rej = {0, 0, 3, 0}; // recfmt 0, sts 3 (invalid QID)
            check(RdmaCm.reject(id, rej) == 0, "reject");
            req.ack();
            check(RdmaCm.destroyId(id) == 0, "destroy rejected id");
            CmEvent ev = host.await(RdmaCm.EVENT_REJECTED);
            ByteBuffer pd = ev.privateData();
            int len = ev.privateDataLength();
            check(len >= 4 && pd.get(0) == 0 && pd.get(1) == 0 && pd.get(2) == 3 && pd.get(3) == 0,
                    "reject private data " + len + " bytes");
            ev.ack();
        }
    }

    /**
     * {@code Verbs.destroyQp} on an id with no QP (before one is created, and a second time after it is
     * destroyed) returns 0 and leaves the id as it is: a cleanup path calls it whatever step failed, and
     * rdma_destroy_qp itself would dereference the missing QP.
     */
    static void checkDestroyQpWithoutQp(InetAddress address, int port) throws Exception {
        try (Side target = Side.listen(address, port); Side host = Side.resolve(address, port)) {
            check(RdmaCm.qp(host.id) == 0, "a resolved id has no QP yet");
            check(Verbs.destroyQp(host.id) == 0, "destroyQp before a QP exists");
            host.createQp(0, false);
            check(Verbs.destroyQp(host.id) == 0, "destroyQp");
            check(RdmaCm.qp(host.id) == 0, "rdma_cm_id->qp cleared by destroyQp");
            host.qp = 0;
            check(Verbs.destroyQp(host.id) == 0, "destroyQp a second time");
        }
    }

    /** Batched SRQ receives, signalled and unsignalled SENDs, an inline SEND, wr_id tags, qp_num. */
    static void checkSendRecv(InetAddress address, int port) throws Exception {
        try (Pair p = Pair.connect(address, port)) {
            HugepageArena h = p.host.arena;
            h.buffer().put(0, (byte) 0x11).put(BUF, (byte) 0x22).put(2 * BUF, (byte) 0x33);
            SendWorkRequests s = p.host.sends;
            s.setSend(0, 100, h.address(), 64, p.host.lkey, 0);                           // unsignalled
            s.setSend(1, 101, h.address() + BUF, 128, p.host.lkey, Verbs.SEND_SIGNALED);
            int inline = Math.min(32, p.host.caps.maxInlineData());
            s.setSend(2, 102, h.address() + 2 * BUF, Math.max(inline, 1), p.host.lkey,
                    Verbs.SEND_SIGNALED | (inline > 0 ? Verbs.SEND_INLINE : 0));
            check(Verbs.postSend(p.host.qp, s, 0, 3) == 3, "post 3 sends");
            List<long[]> hostWcs = p.host.poll(2);
            check(hostWcs.get(0)[0] == 101 && hostWcs.get(1)[0] == 102, "only signalled sends complete: " + ids(hostWcs));
            List<long[]> recvs = p.target.poll(3);
            int qpNum = Verbs.qpNum(p.target.qp);
            int[] lens = {64, 128, Math.max(inline, 1)};
            byte[] firsts = {0x11, 0x22, 0x33};
            for (int i = 0; i < 3; i++) {
                long[] wc = recvs.get(i);
                check(wc[2] == Verbs.WC_RECV && wc[3] == lens[i] && wc[4] == qpNum, "recv " + i + ": " + wcText(wc));
                int slot = (int) wc[0] - 1000;
                check(slot >= 0 && slot < RECVS, "recv wr_id " + wc[0]);
                check(p.target.arena.buffer().get(slot * BUF) == firsts[i], "recv " + i + " data");
            }
        }
    }

    /** RDMA READ from the host's memory; RDMA WRITE chained with a SEND in one post lands before the SEND. */
    static void checkRdmaReadWrite(InetAddress address, int port) throws Exception {
        try (Pair p = Pair.connect(address, port)) {
            ByteBuffer hostMem = p.host.arena.buffer();
            for (int i = 0; i < BUF; i++) {
                hostMem.put(8 * BUF + i, (byte) (i * 7));
            }
            long hostRemote = p.host.arena.address() + 8 * BUF;
            Side t = p.target;
            long local = t.arena.address() + 12 * BUF;
            t.sends.setRdmaRead(0, 200, local, BUF, t.lkey, hostRemote, p.host.rkey, Verbs.SEND_SIGNALED);
            check(Verbs.postSend(t.qp, t.sends, 0, 1) == 1, "post read");
            long[] wc = t.poll(1).get(0);
            check(wc[0] == 200 && wc[2] == Verbs.WC_RDMA_READ && wc[3] == BUF, "read completion " + wcText(wc));
            for (int i = 0; i < BUF; i++) {
                check(t.arena.buffer().get(12 * BUF + i) == (byte) (i * 7), "read byte " + i);
            }
            // write the data back, reversed, to another place of the host, then SEND a "response"
            for (int i = 0; i < BUF; i++) {
                t.arena.buffer().put(13 * BUF + i, (byte) ~(i * 7));
            }
            t.arena.buffer().put(14 * BUF, (byte) 0x5a);
            p.host.recvs.set(0, 500, p.host.arena.address() + 15 * BUF, BUF, p.host.lkey);
            check(Verbs.postRecv(p.host.qp, p.host.recvs, 0, 1) == 1, "host recv");
            t.sends.setRdmaWrite(1, 201, t.arena.address() + 13 * BUF, BUF, t.lkey, hostRemote + BUF, p.host.rkey, 0);
            t.sends.setSend(2, 202, t.arena.address() + 14 * BUF, 16, t.lkey, Verbs.SEND_SIGNALED);
            check(Verbs.postSend(t.qp, t.sends, 1, 2) == 2, "post write+send chain");
            long[] sent = t.poll(1).get(0);
            check(sent[0] == 202 && sent[2] == Verbs.WC_SEND, "send completion " + wcText(sent));
            long[] got = p.host.poll(1).get(0);
            check(got[0] == 500 && got[2] == Verbs.WC_RECV && got[3] == 16, "host recv " + wcText(got));
            check(hostMem.get(15 * BUF) == 0x5a, "sent byte");
            for (int i = 0; i < BUF; i++) {
                check(hostMem.get(9 * BUF + i) == (byte) ~(i * 7), "written byte " + i);
            }
        }
    }

    /** An armed CQ raises a completion-channel event (the interrupt idle strategy). */
    static void checkInterrupt(InetAddress address, int port) throws Exception {
        try (Pair p = Pair.connect(address, port)) {
            Side t = p.target;
            check(Verbs.reqNotifyCq(t.cq, false) == 0, "arm");
            int fd = Verbs.compChannelFd(t.compChannel);
            check(Rdma.pollIn(fd, 0) == 0, "channel readable before any completion");
            p.host.sends.setSend(0, 300, p.host.arena.address(), 8, p.host.lkey, Verbs.SEND_SIGNALED);
            check(Verbs.postSend(p.host.qp, p.host.sends, 0, 1) == 1, "post");
            check(Rdma.pollIn(fd, TIMEOUT_MS) == 1, "no completion event within " + TIMEOUT_MS + " ms");
            long cq = Verbs.getCqEvent(t.compChannel);
            check(cq == t.cq, "getCqEvent returned " + cq);
            check(Verbs.ackCqEvents(cq, 1) == 0, "ack");
            check(Verbs.reqNotifyCq(t.cq, false) == 0, "re-arm");
            long[] wc = t.poll(1).get(0);
            check(wc[2] == Verbs.WC_RECV, "recv after wake-up " + wcText(wc));
        }
    }

    /** Moving a QP to error flushes its posted receives with WR_FLUSH_ERR and their wr_ids. */
    static void checkFlush(InetAddress address, int port) throws Exception {
        try (Pair p = Pair.connect(address, port)) {
            p.host.recvs.set(1, 401, p.host.arena.address() + BUF, BUF, p.host.lkey);
            p.host.recvs.set(2, 402, p.host.arena.address() + 2 * BUF, BUF, p.host.lkey);
            check(Verbs.postRecv(p.host.qp, p.host.recvs, 1, 2) == 2, "post recvs");
            check(Verbs.qpToError(p.host.qp) == 0, "qp to error");
            List<long[]> wcs = p.host.poll(2);
            for (long[] wc : wcs) {
                check(wc[1] == Verbs.WC_WR_FLUSH_ERR, "flush status " + wcText(wc));
            }
            check(Collections.min(ids(wcs)) == 401 && Collections.max(ids(wcs)) == 402, "flushed ids " + ids(wcs));
        }
    }

    // ---------------------------------------------------------------- plumbing

    /** One end: event channel, CM id, PD, (comp channel), CQ, (SRQ), QP, an MR over an arena. */
    static final class Side implements AutoCloseable {
        final long channel;
        final CmEvent event = new CmEvent();
        long listenId;
        long id;
        long pd;
        long compChannel;
        long cq;
        long srq;
        long qp;
        long mr;
        int lkey;
        int rkey;
        int unackedCqEvents;
        HugepageArena arena;
        final SendWorkRequests sends = new SendWorkRequests(16, 2);
        final RecvWorkRequests recvs = new RecvWorkRequests(RECVS, 1);
        final Completions wcs = new Completions(16);
        final QpCaps caps = new QpCaps();

        private Side() {
            channel = ok(RdmaCm.createEventChannel(true), "rdma_create_event_channel");
        }

        static Side listen(InetAddress address, int port) {
            Side s = new Side();
            s.listenId = ok(RdmaCm.createId(s.channel, RdmaCm.PS_TCP), "rdma_create_id");
            ok(RdmaCm.bind(s.listenId, address, port), "rdma_bind_addr " + address + ":" + port);
            ok(RdmaCm.listen(s.listenId, 8), "rdma_listen");
            return s;
        }

        static Side resolve(InetAddress address, int port) throws IOException {
            Side s = new Side();
            s.id = ok(RdmaCm.createId(s.channel, RdmaCm.PS_TCP), "rdma_create_id");
            ok(RdmaCm.resolveAddr(s.id, address, port, 2000), "rdma_resolve_addr");
            s.await(RdmaCm.EVENT_ADDR_RESOLVED).ack();
            ok(RdmaCm.resolveRoute(s.id, 2000), "rdma_resolve_route");
            s.await(RdmaCm.EVENT_ROUTE_RESOLVED).ack();
            return s;
        }

        /** PD, CQ (with a completion channel when withSrq: the target's shape), SRQ or own RQ, QP, MR. */
        void createQp(long ctxOverride, boolean withSrq) {
            long ctx = ctxOverride != 0 ? ctxOverride : RdmaCm.context(id);
            check(ctx != 0, "CM id has no verbs context");
            pd = ok(Verbs.allocPd(ctx), "ibv_alloc_pd");
            if (withSrq) {
                compChannel = ok(Verbs.createCompChannel(ctx), "ibv_create_comp_channel");
                ok(Rdma.setNonBlocking(Verbs.compChannelFd(compChannel), true), "O_NONBLOCK");
                srq = ok(Verbs.createSrq(pd, 64, 1, 0), "ibv_create_srq");
            }
            cq = ok(Verbs.createCq(ctx, 64, compChannel, 0), "ibv_create_cq");
            qp = ok(Verbs.createQp(id, pd, cq, cq, srq, 16, withSrq ? 0 : 16, 2, 1, 64, false, caps),
                    "rdma_create_qp");
            check(RdmaCm.qp(id) == qp, "rdma_cm_id->qp");
            arena = HugepageArena.allocate(16 * BUF, false);
            mr = ok(Verbs.regMr(pd, arena.address(), arena.size(),
                    Verbs.ACCESS_LOCAL_WRITE | Verbs.ACCESS_REMOTE_READ | Verbs.ACCESS_REMOTE_WRITE), "ibv_reg_mr");
            lkey = Verbs.lkey(mr);
            rkey = Verbs.rkey(mr);
            if (withSrq) {
                for (int i = 0; i < RECVS; i++) {
                    recvs.set(i, 1000 + i, arena.address() + (long) i * BUF, BUF, lkey);
                }
                check(Verbs.postSrqRecv(srq, recvs, 0, RECVS) == RECVS, "post SRQ receives");
            }
        }

        /** Waits for the next event, which must be {@code type}; returns it un-acked. */
        CmEvent await(int type) throws IOException {
            long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
            int fd = RdmaCm.eventChannelFd(channel);
            while (true) {
                int rc = RdmaCm.getEvent(channel, event);
                if (rc == 0) {
                    if (event.type() != type) {
                        String got = RdmaCm.eventName(event.type()) + " status " + event.status();
                        event.ack();
                        throw new AssertionError("expected " + RdmaCm.eventName(type) + ", got " + got);
                    }
                    return event;
                }
                check(rc == -Errno.EAGAIN, "rdma_get_cm_event: " + Errno.describe(rc));
                long left = (deadline - System.nanoTime()) / 1_000_000;
                check(left > 0, "timeout waiting for " + RdmaCm.eventName(type));
                Rdma.pollIn(fd, (int) left);
            }
        }

        /** Polls exactly n completions: each as {wr_id, status, opcode, byte_len, qp_num, wc_flags}. */
        List<long[]> poll(int n) {
            List<long[]> out = new ArrayList<>();
            long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
            while (out.size() < n) {
                int got = Verbs.pollCq(cq, wcs, Math.min(wcs.capacity(), n - out.size()));
                check(got >= 0, "ibv_poll_cq " + got);
                for (int i = 0; i < got; i++) {
                    out.add(new long[] {wcs.wrId(i), wcs.status(i), wcs.opcode(i), wcs.byteLen(i), wcs.qpNum(i),
                        wcs.wcFlags(i)});
                }
                check(System.nanoTime() < deadline, "timeout: " + out.size() + " of " + n + " completions");
                if (got == 0) {
                    LockSupport.parkNanos(50_000);
                }
            }
            for (long[] wc : out) {
                if (wc[1] != Verbs.WC_SUCCESS && wc[1] != Verbs.WC_WR_FLUSH_ERR) {
                    throw new AssertionError("completion error " + wcText(wc));
                }
            }
            Thread.yield();
            check(Verbs.pollCq(cq, wcs, 1) == 0, "an extra completion arrived");
            return out;
        }

        @Override
        public void close() {
            if (qp != 0) {
                Verbs.qpToError(qp);
                Verbs.destroyQp(id);
            }
            if (id != 0) {
                RdmaCm.destroyId(id);
            }
            if (listenId != 0) {
                RdmaCm.destroyId(listenId);
            }
            if (mr != 0) {
                Verbs.deregMr(mr);
            }
            if (srq != 0) {
                Verbs.destroySrq(srq);
            }
            if (cq != 0) {
                Verbs.destroyCq(cq);
            }
            if (compChannel != 0) {
                Verbs.destroyCompChannel(compChannel);
            }
            if (pd != 0) {
                Verbs.deallocPd(pd);
            }
            if (arena != null) {
                arena.close();
            }
            RdmaCm.destroyEventChannel(channel);
            event.close();
            sends.close();
            recvs.close();
            wcs.close();
        }
    }

    /** A connected target (SRQ, armed-capable CQ) and host (own RQ), as nvmf4j and nvme-rdma would be. */
    static final class Pair implements AutoCloseable {
        final Side target;
        final Side host;
        int requestLength;
        int acceptedLength;
        int hostInitiatorDepthSeen;

        private Pair(Side target, Side host) {
            this.target = target;
            this.host = host;
        }

        static Pair connect(InetAddress address, int port) throws IOException {
            Side target = Side.listen(address, port);
            Side host = null;
            Pair p = null;
            try {
                host = Side.resolve(address, port);
                p = new Pair(target, host);
                host.createQp(0, false);
                DeviceAttributes d = Rdma.queryDevice(RdmaCm.context(host.id));
                byte[] req = pattern(32, 1);
                ok(RdmaCm.connect(host.id, req, Math.max(1, d.maxQpRdAtom()), 0, 7, 7), "rdma_connect");
                CmEvent ev = target.await(RdmaCm.EVENT_CONNECT_REQUEST);
                check(ev.listenId() == target.listenId, "listen id");
                p.requestLength = ev.privateDataLength();
                for (int i = 0; i < 32; i++) {
                    check(ev.privateData().get(i) == req[i], "request private data byte " + i);
                }
                p.hostInitiatorDepthSeen = ev.initiatorDepth();
                target.id = ev.id();
                target.createQp(0, true);
                int depth = Math.max(1, Math.min(ev.initiatorDepth(), d.maxQpInitRdAtom()));
                ok(RdmaCm.accept(target.id, pattern(32, 2), 0, depth, 7), "rdma_accept");
                ev.ack();
                CmEvent est = host.await(RdmaCm.EVENT_ESTABLISHED);
                p.acceptedLength = est.privateDataLength();
                byte[] rep = pattern(32, 2);
                for (int i = 0; i < 32; i++) {
                    check(est.privateData().get(i) == rep[i], "accept private data byte " + i);
                }
                est.ack();
                target.await(RdmaCm.EVENT_ESTABLISHED).ack();
                return p;
            } catch (IOException | RuntimeException | Error e) {
                if (host != null) {
                    host.close();
                }
                target.close();
                throw e;
            }
        }

        @Override
        public void close() {
            host.close();
            target.close();
        }
    }

    /** The first IPv4 address of a netdev that carries an RDMA device (sysfs gid_attrs/ndevs). */
    static InetAddress defaultAddress() throws IOException {
        Path ib = Paths.get("/sys/class/infiniband");
        if (Files.isDirectory(ib)) {
            try (DirectoryStream<Path> devices = Files.newDirectoryStream(ib)) {
                for (Path dev : devices) {
                    Path ndevs = dev.resolve("ports/1/gid_attrs/ndevs");
                    if (!Files.isDirectory(ndevs)) {
                        continue;
                    }
                    try (DirectoryStream<Path> entries = Files.newDirectoryStream(ndevs)) {
                        for (Path e : entries) {
                            String name;
                            try {
                                name = Files.readString(e).trim();
                            } catch (IOException unset) {
                                continue;
                            }
                            NetworkInterface nif = NetworkInterface.getByName(name);
                            if (nif == null) {
                                continue;
                            }
                            for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                                if (a instanceof Inet4Address) {
                                    return a;
                                }
                            }
                        }
                    }
                }
            }
        }
        throw new IOException("no IPv4 address on a netdev with an RDMA device; pass one");
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }

    static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    static long ok(long rc, String what) {
        if (rc < 0) {
            throw new AssertionError(what + ": " + Errno.describe((int) rc) + " (" + rc + ")");
        }
        return rc;
    }

    private static List<Long> ids(List<long[]> wcs) {
        List<Long> ids = new ArrayList<>();
        for (long[] wc : wcs) {
            ids.add(wc[0]);
        }
        return ids;
    }

    private static String wcText(long[] wc) {
        return "{wr_id=" + wc[0] + " status=" + Verbs.wcStatusName((int) wc[1]) + " opcode=" + wc[2] + " byte_len="
                + wc[3] + " qp_num=" + wc[4] + " flags=" + wc[5] + "}";
    }
}
