import io.nvmf4j.rdma.CmEvent;
import io.nvmf4j.rdma.Errno;
import io.nvmf4j.rdma.Rdma;
import io.nvmf4j.rdma.RdmaCm;
import io.nvmf4j.rdma.Verbs;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * e2e helper (run in the guest with the rdma-cm classes on the class path, as a single-file program):
 * connects to an NVMe/RDMA target with bad nvme_rdma_cm_req private data and prints, per case, the
 * reject status the target answered. Output lines: "case expected=N got=M" ("got=none" when the
 * connection was not rejected with NVMe/RDMA private data). Exit 0 when every case got its status.
 *
 * usage: java -cp native/target/classes:rdma-cm/target/classes e2e/guest/BadConnect.java ADDRESS PORT
 */
public class BadConnect {
    private static final int TIMEOUT_MS = 10_000;

    public static void main(String[] args) throws Exception {
        if (!Rdma.isAvailable()) {
            System.out.println("RDMA unavailable: " + Rdma.unavailabilityCause());
            System.exit(2);
        }
        InetAddress address = InetAddress.getByName(args[0]);
        int port = Integer.parseInt(args[1]);
        int failures = 0;
        // recfmt, qid, hrqsize, hsqsize, responder resources (the target's initiator depth), expected
        int[][] cases = {
            {1, 0, 32, 31, 16, 2},   // RECFMT not 0
            {0, 999, 128, 127, 16, 3}, // QID above maxIoQueues
            {0, 1, 128, 0, 16, 4},   // HSQSIZE 0
            {0, 1, 4096, 4095, 16, 4}, // HSQSIZE above the maximum
            {0, 1, 64, 127, 16, 5},  // HRQSIZE < HSQSIZE + 1
            {0, 0, 32, 31, 0, 7},    // initiator depth 0 (the host offers no responder resources)
        };
        String[] names = {"recfmt", "qid", "hsqsize-0", "hsqsize-max", "hrqsize", "ird-0"};
        for (int i = 0; i < cases.length; i++) {
            int[] c = cases[i];
            int got = 0;
            for (int tries = 1; ; tries++) {
                try {
                    got = attempt(address, port, c[0], c[1], c[2], c[3], c[4]);
                    break;
                } catch (ResolveFailed e) {
                    // address or route resolution is not what this checks (rxe under TCG can be slow
                    // to answer): try again, and report it when it keeps failing
                    System.out.printf("%s: %s (try %d)%n", names[i], e.getMessage(), tries);
                    if (tries == 3) {
                        throw e;
                    }
                }
            }
            boolean ok = got == c[5];
            failures += ok ? 0 : 1;
            System.out.printf("%s expected=%d got=%s%n", names[i], c[5], got < 0 ? "none(" + got + ")" : got);
        }
        System.exit(failures == 0 ? 0 : 1);
    }

    /** One connect; the reject status from the private data, or a negative value. */
    static int attempt(InetAddress address, int port, int recfmt, int qid, int hrqsize, int hsqsize,
                       int responderResources) throws Exception {
        long channel = RdmaCm.createEventChannel(true);
        long id = RdmaCm.createId(channel, RdmaCm.PS_TCP);
        CmEvent ev = new CmEvent();
        long pd = 0, cq = 0;
        try {
            try {
                check(RdmaCm.resolveAddr(id, address, port, 5000), "resolve addr");
                await(channel, ev, RdmaCm.EVENT_ADDR_RESOLVED).ack();
                check(RdmaCm.resolveRoute(id, 5000), "resolve route");
                await(channel, ev, RdmaCm.EVENT_ROUTE_RESOLVED).ack();
            } catch (IllegalStateException e) {
                throw new ResolveFailed(e.getMessage());
            }
            long ctx = RdmaCm.context(id);
            pd = check(Verbs.allocPd(ctx), "pd");
            cq = check(Verbs.createCq(ctx, 16, 0, 0), "cq");
            check(Verbs.createQp(id, pd, cq, cq, 0, 4, 4, 1, 1, 0, false, null), "qp");
            ByteBuffer b = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
            b.putShort(0, (short) recfmt).putShort(2, (short) qid).putShort(4, (short) hrqsize)
                .putShort(6, (short) hsqsize).putShort(8, (short) 0xFFFF);
            check(RdmaCm.connect(id, b.array(), responderResources, 0, 7, 7), "connect");
            CmEvent r = await(channel, ev, -1);
            int type = r.type();
            int result = -1000 - type;
            if (type == RdmaCm.EVENT_REJECTED && r.privateDataLength() >= 4) {
                ByteBuffer p = r.privateData().order(ByteOrder.LITTLE_ENDIAN);
                result = Short.toUnsignedInt(p.getShort(2));
            }
            r.ack();
            if (type == RdmaCm.EVENT_ESTABLISHED) {
                RdmaCm.disconnect(id);
            }
            return result;
        } finally {
            Verbs.destroyQp(id);
            if (cq > 0) {
                Verbs.destroyCq(cq);
            }
            if (pd > 0) {
                Verbs.deallocPd(pd);
            }
            RdmaCm.destroyId(id);
            RdmaCm.destroyEventChannel(channel);
        }
    }

    /** Address or route resolution failed: the case did not reach the target. */
    static final class ResolveFailed extends IllegalStateException {
        ResolveFailed(String message) {
            super(message);
        }
    }

    static long check(long rc, String what) {
        if (rc < 0) {
            throw new IllegalStateException(what + ": " + Errno.describe((int) rc));
        }
        return rc;
    }

    static CmEvent await(long channel, CmEvent ev, int type) {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (true) {
            int rc = RdmaCm.getEvent(channel, ev);
            if (rc == 0) {
                if (type >= 0 && ev.type() != type) {
                    String got = RdmaCm.eventName(ev.type());
                    ev.ack();
                    throw new IllegalStateException("expected " + RdmaCm.eventName(type) + ", got " + got);
                }
                return ev;
            }
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new IllegalStateException("no " + (type >= 0 ? RdmaCm.eventName(type) : "answer to the connect")
                    + " within " + TIMEOUT_MS + " ms");
            }
            Rdma.pollIn(RdmaCm.eventChannelFd(channel), (int) left);
        }
    }
}
