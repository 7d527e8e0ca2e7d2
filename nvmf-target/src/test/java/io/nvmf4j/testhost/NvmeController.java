package io.nvmf4j.testhost;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One controller as a Linux host sets it up: admin queue Connect (dynamic cntlid), CC.EN and
 * CSTS.RDY, Set Features Number of Queues, then one Connect per I/O queue with the same cntlid.
 */
public final class NvmeController implements AutoCloseable {
    public static final int ADMIN_SQSIZE = 31;
    public static final int IO_SQSIZE = 127;
    public static final int FID_NUMBER_OF_QUEUES = 0x07;

    private final NvmeHost admin;
    private final List<NvmeHost> io;
    private final int cntlid;
    private final byte[] hostid;

    private NvmeController(NvmeHost admin, List<NvmeHost> io, int cntlid, byte[] hostid) {
        this.admin = admin;
        this.io = io;
        this.cntlid = cntlid;
        this.hostid = hostid;
    }

    /** Authenticates one queue after its Connect asked for it (AUTHREQ.ATR); throws when that fails. */
    @FunctionalInterface
    public interface Authenticator {
        void authenticate(NvmeHost queue, int qid);
    }

    public static NvmeController open(String address, int port, String subnqn, String hostnqn, int katoMs,
                                      int ioQueues, TcpHostOptions options) throws IOException {
        return open(address, port, subnqn, hostnqn, katoMs, ioQueues, options, null);
    }

    /** As a Linux host with a DH-HMAC-CHAP key: each queue whose Connect sets AUTHREQ.ATR is authenticated. */
    public static NvmeController open(String address, int port, String subnqn, String hostnqn, int katoMs,
                                      int ioQueues, TcpHostOptions options, Authenticator auth) throws IOException {
        byte[] hostid = hostIdFor(hostnqn);
        List<NvmeHost> io = new ArrayList<>();
        NvmeHost admin = new NvmeHost(TcpHost.connect(address, port, options), 512);
        try {
            NvmeHost.ConnectResult r = admin.fabricsConnect(0, ADMIN_SQSIZE, 0xFFFF, katoMs, hostnqn, subnqn, hostid);
            check(r.completion(), "admin Connect to " + subnqn);
            authenticateIfAsked(auth, admin, 0, r.completion());
            admin.enableController();
            if (ioQueues > 0) {
                int n = ioQueues - 1;
                check(admin.setFeatures(FID_NUMBER_OF_QUEUES, n | (n << 16)), "Set Features Number of Queues");
            }
            for (int qid = 1; qid <= ioQueues; qid++) {
                NvmeHost q = new NvmeHost(TcpHost.connect(address, port, options), 512);
                io.add(q);
                Completion c = q.fabricsConnect(qid, IO_SQSIZE, r.cntlid(), 0, hostnqn, subnqn, hostid).completion();
                check(c, "I/O queue " + qid + " Connect");
                authenticateIfAsked(auth, q, qid, c);
            }
            return new NvmeController(admin, io, r.cntlid(), hostid);
        } catch (IOException | RuntimeException e) {
            io.forEach(q -> q.queue().close());
            admin.queue().close();
            throw e;
        }
    }

    /** Connect dw0 bit 17: AUTHREQ.ATR. */
    private static void authenticateIfAsked(Authenticator auth, NvmeHost q, int qid, Completion connect) {
        if ((connect.dw0() & (1 << 17)) != 0) {
            if (auth == null) {
                throw new IllegalStateException("qid " + qid + ": the target asks for authentication (ATR)");
            }
            auth.authenticate(q, qid);
        }
    }

    /** A stable 16-byte host identifier derived from the host NQN. */
    public static byte[] hostIdFor(String hostnqn) {
        UUID u = UUID.nameUUIDFromBytes(hostnqn.getBytes(StandardCharsets.US_ASCII));
        return ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits()).array();
    }

    private static void check(Completion c, String what) {
        if (!c.ok()) {
            throw new IllegalStateException(what + " failed: " + c);
        }
    }

    public NvmeHost admin() {
        return admin;
    }

    /** I/O queue {@code index} (qid = index + 1). */
    public NvmeHost io(int index) {
        return io.get(index);
    }

    public List<NvmeHost> ioQueues() {
        return List.copyOf(io);
    }

    public int cntlid() {
        return cntlid;
    }

    public byte[] hostid() {
        return hostid.clone();
    }

    @Override
    public void close() {
        io.forEach(q -> q.queue().close());
        admin.queue().close();
    }
}
