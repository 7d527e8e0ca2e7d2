package io.nvmf4j.cmd;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.auth.AuthMessages;
import io.nvmf4j.auth.HostKeys;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.LogText;
import io.nvmf4j.core.CommandHandler;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Queue;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.engine.ControllerLog;
import io.nvmf4j.nvme.Layout;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;

import java.io.IOException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Fabrics commands: Connect, Property Get, Property Set, Disconnect (NVMe-oF 1.1 section 3); Authentication Send
 * and Receive are in {@link AuthCommands}.
 *
 * <pre>
 * Connect SQE: 40 RECFMT u16 | 42 QID u16 | 44 SQSIZE u16 | 46 CATTR u8 | 48 KATO u32
 * Connect data (1024 B): 0 HOSTID[16] | 16 CNTLID u16 | 256 SUBNQN[256] | 512 HOSTNQN[256]
 * Property Get/Set SQE: 40 ATTRIB u8 (0: 4 bytes, 1: 8 bytes) | 44 OFST u32 | 48 VALUE u64
 * </pre>
 */
public final class FabricsCommands {
    public static final int CONNECT_DATA_SIZE = 1024;
    public static final int SQE_RECFMT = 40;
    public static final int SQE_QID = 42;
    public static final int SQE_SQSIZE = 44;
    public static final int SQE_CATTR = 46;
    public static final int SQE_KATO = 48;
    public static final int DATA_HOSTID = 0;
    public static final int DATA_CNTLID = 16;
    public static final int DATA_SUBNQN = 256;
    public static final int DATA_HOSTNQN = 512;
    /** CATTR bit 2: the host disables SQ flow control (SQHD is not reported). */
    public static final int CATTR_DISABLE_SQFLOW = 0x04;
    /** Admin queues hold at most 32 entries (ASQSZ in the discovery log). */
    public static final int ADMIN_QUEUE_MAX_ENTRIES = 32;
    /** KATO for a discovery controller whose host asked for none (as Linux nvmet). */
    public static final int DISCOVERY_DEFAULT_KATO_MS = 120_000;

    public static final int PROP_CAP = 0x00;
    public static final int PROP_VS = 0x08;
    public static final int PROP_CC = 0x14;
    public static final int PROP_CSTS = 0x1C;
    public static final int NVME_VERSION = 0x00020000;
    /** CAP.TO: ready timeout in 500 ms units, at least (the Command Quiesce Time may ask for more). */
    private static final long CAP_TO = 15;

    private final Target target;
    private final CommandHandler connect = this::executeConnect;
    private final CommandHandler propertyGet = this::executePropertyGet;
    private final CommandHandler propertySet = this::executePropertySet;
    private final CommandHandler disconnect = this::executeDisconnect;
    private final AuthCommands auth = new AuthCommands();
    /** Connect response dw0 bit 17 (AUTHREQ.ATR): the host must authenticate this queue with DH-HMAC-CHAP. */
    public static final int AUTHREQ_ATR = 1 << 17;

    public FabricsCommands(Target target) {
        this.target = target;
    }

    /** A queue without a controller accepts only Connect. */
    int parseConnect(Request req) {
        req.handler = connect;
        req.xferDir = Request.XFER_H2C;
        req.expectedLength = CONNECT_DATA_SIZE;
        return NvmeStatus.SUCCESS;
    }

    /** Fabrics commands on a connected queue. */
    int parse(Request req) {
        boolean admin = req.queue().qid() == 0;
        switch (req.sqe.fctype()) {
            case Opcodes.FCTYPE_CONNECT:
                return NvmeStatus.COMMAND_SEQUENCE_ERROR;
            case Opcodes.FCTYPE_PROPERTY_GET:
                req.handler = admin ? propertyGet : null;
                break;
            case Opcodes.FCTYPE_PROPERTY_SET:
                req.handler = admin ? propertySet : null;
                break;
            case Opcodes.FCTYPE_DISCONNECT:
                req.handler = admin ? null : disconnect;
                break;
            case Opcodes.FCTYPE_AUTH_SEND:
                return auth.parseSend(req);
            case Opcodes.FCTYPE_AUTH_RECV:
                return auth.parseReceive(req);
            default:
                req.handler = null;
        }
        return req.handler == null ? NvmeStatus.INVALID_OPCODE : NvmeStatus.SUCCESS;
    }

    // ---- Connect ----

    private void executeConnect(Request req) {
        ByteBuf d = req.data;
        int recfmt = req.sqe.u16(SQE_RECFMT);
        int qid = req.sqe.u16(SQE_QID);
        int sqsize = req.sqe.u16(SQE_SQSIZE);
        int cattr = req.sqe.u8(SQE_CATTR);
        int kato = req.sqe.u32(SQE_KATO);
        byte[] hostid = new byte[16];
        d.getBytes(DATA_HOSTID, hostid);
        int cntlid = d.getUnsignedShortLE(DATA_CNTLID);
        String subnqn = Layout.getNulTerminated(d, DATA_SUBNQN, 256);
        String hostnqn = Layout.getNulTerminated(d, DATA_HOSTNQN, 256);
        Queue queue = req.queue();

        if (queue.connectInProgress() != req || queue.controller() != null) {
            // a Connect that came while an earlier one on this queue was still in progress (its data on the
            // way: the later one may well execute first): one queue binds one controller
            refused(req, subnqn, hostnqn, qid, "a Connect on a queue that is connected or connecting");
            req.fail(NvmeStatus.COMMAND_SEQUENCE_ERROR, Request.NO_ERROR_LOCATION);
            return;
        }
        if (recfmt != 0) {
            refuse(req, subnqn, hostnqn, qid, "record format " + recfmt + " (only 0 exists)",
                NvmeStatus.CONNECT_INCOMPATIBLE_FORMAT, false, SQE_RECFMT);
            return;
        }
        int subControl = LogText.firstControl(subnqn);
        int hostControl = LogText.firstControl(hostnqn);
        if (subControl >= 0 || hostControl >= 0) {
            // no NQN holds a C0, DEL or C1 character (Nqn): a malformed parameter, pointed at in the Connect data
            boolean sub = subControl >= 0;
            int at = sub ? subControl : hostControl;
            refuse(req, subnqn, hostnqn, qid, String.format("%s holds a control character (U+%04X at %d)",
                    sub ? "subnqn" : "hostnqn", (int) (sub ? subnqn : hostnqn).charAt(at), at),
                NvmeStatus.CONNECT_INVALID_PARAMETERS, true, sub ? DATA_SUBNQN : DATA_HOSTNQN);
            return;
        }
        TlsPsk.Identity tls = queue.secureChannelIdentity();
        if (tls != null && !(tls.hostnqn().equals(hostnqn) && tls.subnqn().equals(subnqn))) {
            // the PSK authenticated the host it names for the subsystem it names, no other pair
            boolean host = !tls.hostnqn().equals(hostnqn);
            refuse(req, subnqn, hostnqn, qid, "the queue's TLS PSK identity is for host " + tls.hostnqn()
                    + " and subsystem " + tls.subnqn(), host ? NvmeStatus.CONNECT_INVALID_HOST
                    : NvmeStatus.CONNECT_INVALID_PARAMETERS, true, host ? DATA_HOSTNQN : DATA_SUBNQN);
            return;
        }
        Subsystem subsys = target.subsystem(subnqn);
        if (subsys == null || !subsys.reachableVia(queue.listener())) {
            refuse(req, subnqn, hostnqn, qid, subsys == null ? "unknown subsystem"
                    : "subsystem not reachable on listener " + queue.listener(),
                NvmeStatus.CONNECT_INVALID_PARAMETERS, true, DATA_SUBNQN);
            return;
        }
        if (!subsys.allowsHost(hostnqn)) {
            refuse(req, subnqn, hostnqn, qid, "host not allowed", NvmeStatus.CONNECT_INVALID_HOST, true, DATA_HOSTNQN);
            return;
        }
        HostKeyConfig hostKey = subsys.hostKey(hostnqn);
        if (tls == null && hostKey != null && hostKey.tlsKey != null) {
            // the host is known by its PSK: a queue without TLS has proved nothing, whatever listener it came
            // through. Connect Invalid Host (the host may not associate over this channel), not Authentication
            // Required: no in-band authentication can stand in for the missing TLS here
            refuse(req, subnqn, hostnqn, qid, "the host has a TLS PSK (hostKeys tlsKey) and this queue is not over"
                + " TLS (listener " + queue.listener() + ")", NvmeStatus.CONNECT_INVALID_HOST, true, DATA_HOSTNQN);
            return;
        }
        if (sqsize == 0) {
            refuse(req, subnqn, hostnqn, qid, "SQSIZE 0", NvmeStatus.CONNECT_INVALID_PARAMETERS, false, SQE_SQSIZE);
            return;
        }
        if (qid == 0) {
            connectAdmin(req, subsys, sqsize, cattr, kato, cntlid, hostnqn, hostid);
        } else {
            connectIo(req, subsys, qid, sqsize, cattr, cntlid, hostnqn, hostid);
        }
    }

    private void connectAdmin(Request req, Subsystem subsys, int sqsize, int cattr, int kato, int cntlid,
                              String hostnqn, byte[] hostid) {
        Queue queue = req.queue();
        if (sqsize >= ADMIN_QUEUE_MAX_ENTRIES) {
            refuse(req, subsys.nqn(), hostnqn, 0, "admin SQSIZE " + sqsize + " above " + (ADMIN_QUEUE_MAX_ENTRIES - 1),
                NvmeStatus.CONNECT_INVALID_PARAMETERS, false, SQE_SQSIZE);
            return;
        }
        if (cntlid != 0xFFFF) {
            // dynamic controller model only
            refuse(req, subsys.nqn(), hostnqn, 0, "cntlid " + cntlid + " asked (dynamic controllers only: 0xffff)",
                NvmeStatus.CONNECT_INVALID_PARAMETERS, true, DATA_CNTLID);
            return;
        }
        HostKeyConfig keyFiles = subsys.hostKey(hostnqn);
        if (keyFiles == null || keyFiles.dhchapKey == null) {
            createController(req, subsys, sqsize, cattr, kato, hostnqn, hostid, null);
            return;
        }
        // the key files are read off the poll group's thread, then the Connect goes on here
        HostKeys[] read = new HostKeys[1];
        IOException[] error = new IOException[1];
        AuthWork.run(req, () -> {
            try {
                read[0] = HostKeys.read(keyFiles.dhchapKey, keyFiles.dhchapCtrlKey);
            } catch (IOException e) {
                error[0] = e;
            }
        }, () -> {
            if (queue.isClosed()) {
                req.complete(NvmeStatus.ABORTED_SQ_DELETION); // the host closed the connection meanwhile
            } else if (error[0] != null) {
                // as nvmet_setup_auth failing with FAILED: the host cannot be authenticated, so it is refused
                target.observer().authFailed(subsys.nqn(), AuthMessages.reason(AuthMessages.FAILED));
                refuse(req, subsys.nqn(), hostnqn, 0, "authentication: " + error[0].getMessage(),
                    NvmeStatus.CONNECT_INVALID_HOST, true, DATA_HOSTNQN);
            } else {
                createController(req, subsys, sqsize, cattr, kato, hostnqn, hostid, read[0]);
            }
        });
    }

    /** The admin Connect's controller, for a host that must authenticate with {@code keys} (null: none). */
    private void createController(Request req, Subsystem subsys, int sqsize, int cattr, int kato, String hostnqn,
                                  byte[] hostid, HostKeys keys) {
        Queue queue = req.queue();
        int effectiveKato = subsys.isDiscovery() && kato == 0 ? DISCOVERY_DEFAULT_KATO_MS : kato;
        java.nio.ByteBuffer id = java.nio.ByteBuffer.wrap(hostid);
        if (subsys.whenQuiesced(id.getLong(0), id.getLong(8), queue.executor(), () -> {
            if (queue.isClosed()) {
                req.complete(NvmeStatus.ABORTED_SQ_DELETION); // the host closed the connection meanwhile
            } else {
                createController(req, subsys, sqsize, cattr, kato, hostnqn, hostid, keys);
            }
        })) {
            // this host's previous controller still has commands on a device: its new one starts after them
            return;
        }
        Controller c = subsys.createController((s, n) -> new Controller(s, n, hostnqn, hostid, queue, effectiveKato,
            target.observer(), target.commandQuiesceTimeMs()));
        if (c == null && subsys.isRemoved()) {
            refuse(req, subsys.nqn(), hostnqn, 0, "subsystem removed", NvmeStatus.CONNECT_INVALID_PARAMETERS, true,
                DATA_SUBNQN);
            return;
        }
        if (c == null) {
            target.observer().controllerLimitReached(subsys.nqn());
            refuse(req, subsys.nqn(), hostnqn, 0, "controller limit reached: every cntlid of minCntlid..maxCntlid "
                + subsys.cntlidRange() + " is in use", NvmeStatus.CONNECT_CONTROLLER_BUSY, false,
                Request.NO_ERROR_LOCATION);
            return;
        }
        if (keys != null) {
            c.requireAuthentication(keys);
        }
        queue.bind(c, 0, sqsize, (cattr & CATTR_DISABLE_SQFLOW) != 0);
        c.startKeepAlive();
        if (c.authRequired()) {
            c.startAuthDeadline(0, queue, target.authTimeoutMs());
        }
        ControllerLog.connected(subsys.nqn(), c.cntlid(), hostnqn, queue.peer(), queue.listenerTransport(),
            effectiveKato, sqsize + 1);
        req.dw0 = c.cntlid() | (c.authRequired() ? AUTHREQ_ATR : 0);
        req.complete(NvmeStatus.SUCCESS);
    }

    private void connectIo(Request req, Subsystem subsys, int qid, int sqsize, int cattr, int cntlid,
                           String hostnqn, byte[] hostid) {
        connectIo(req, subsys, qid, sqsize, cattr, cntlid, hostnqn, hostid, null);
    }

    /**
     * An I/O queue's Connect. When the qid is held, by a queue whose connection the host may have closed already,
     * the Connect waits for that queue to be detached ({@link QidWait}) and then runs again, with the wait that
     * ended as {@code waited} (null: it has not waited).
     */
    private void connectIo(Request req, Subsystem subsys, int qid, int sqsize, int cattr, int cntlid,
                           String hostnqn, byte[] hostid, QidWait waited) {
        Queue queue = req.queue();
        if (queue.isClosed()) {
            // the host closed this connection while its Connect waited for the qid: no response goes out
            req.complete(NvmeStatus.ABORTED_SQ_DELETION);
            return;
        }
        Controller c = subsys.isDiscovery() ? null : subsys.controller(cntlid);
        String nqn = subsys.nqn();
        if (c == null || !c.hostnqn().equals(hostnqn) || c.isDestroyed()) {
            refuse(req, nqn, hostnqn, qid, "no controller " + cntlid + " of this host",
                NvmeStatus.CONNECT_INVALID_PARAMETERS, true, DATA_CNTLID);
            return;
        }
        if (!java.util.Arrays.equals(c.hostid(), hostid)) {
            refuse(req, nqn, hostnqn, qid, "host ID differs from controller " + cntlid + "'s",
                NvmeStatus.CONNECT_INVALID_PARAMETERS, true, DATA_HOSTID);
            return;
        }
        if (!c.enabledAndReady()) {
            // I/O queues come after the controller is enabled (CC.EN = 1, CSTS.RDY = 1)
            refused(req, nqn, hostnqn, qid, "I/O queue before controller " + cntlid + " is enabled");
            req.fail(NvmeStatus.COMMAND_SEQUENCE_ERROR, SQE_QID);
            return;
        }
        if (qid > c.grantedIoQueues()) {
            refuse(req, nqn, hostnqn, qid, "qid above the " + c.grantedIoQueues() + " granted I/O queues",
                NvmeStatus.CONNECT_INVALID_PARAMETERS, false, SQE_QID);
            return;
        }
        if (sqsize >= queue.limits().maxQueueDepth()) {
            refuse(req, nqn, hostnqn, qid, "SQSIZE " + sqsize + " above " + (queue.limits().maxQueueDepth() - 1),
                NvmeStatus.CONNECT_INVALID_PARAMETERS, false, SQE_SQSIZE);
            return;
        }
        QidWait wait = waited != null ? null : new QidWait(req, qid,
            w -> connectIo(req, subsys, qid, sqsize, cattr, cntlid, hostnqn, hostid, w));
        int attached = c.attachIoQueue(qid, queue, wait);
        if (attached == Controller.QID_WAITING) {
            wait.start(c);
            return;
        }
        if (attached != Controller.ATTACHED) {
            Queue holder = c.ioQueue(qid);
            refuse(req, nqn, hostnqn, qid, "qid already connected" + (holder == null ? "" : " (the queue from "
                    + holder.peer() + (waited == null ? "" : ", still there after " + waited.waitedMillis() + " ms")
                    + ")"), NvmeStatus.CONNECT_INVALID_PARAMETERS, false, SQE_QID);
            return;
        }
        c.clearAuthSession(qid);
        queue.bind(c, qid, sqsize, (cattr & CATTR_DISABLE_SQFLOW) != 0);
        c.touch();
        if (c.authRequired()) {
            c.startAuthDeadline(qid, queue, target.authTimeoutMs());
        }
        req.dw0 = c.cntlid() | (c.authRequired() ? AUTHREQ_ATR : 0);
        req.complete(NvmeStatus.SUCCESS);
    }

    /**
     * An I/O queue's Connect whose qid another queue of the controller holds. A host may connect a qid again as soon
     * as it has deleted its queue, and over TCP deleting is closing the connection; the target learns of the close
     * on the old connection's poll group, when that thread reads the end of the stream and then runs the channel's
     * inactive event, which detaches the queue. The new connection's Connect runs on another poll group and can
     * come first. So the Connect's completion waits, without blocking its poll group, until the holder is detached
     * ({@link Controller#detachIoQueue} runs {@link #run()}), then runs again; a holder that is still there after
     * {@link #QID_WAIT_MS} (the host connected a qid that is in use) gets the Connect refused. SPDK's target
     * likewise looks at a duplicate qid again, once, 1 ms later (DUPLICATE_QID_RETRY_US), before it refuses it.
     *
     * <p>{@link #freed} and {@link #expired} run on the Connect's queue thread, so {@link #over} needs no lock.
     */
    private static final class QidWait implements Runnable {
        /**
         * How long a Connect waits for the qid's holder to go. Well above what a poll group that is not scheduled at
         * once on a busy machine takes to see a close (tens of milliseconds on two loaded cores), below half of
         * SPDK's host's Connect timeout (500 ms).
         */
        static final long QID_WAIT_MS = 250;

        private final Request req;
        private final int qid;
        /** The Connect once more, given this wait. */
        private final Consumer<QidWait> again;
        private final long startNanos = System.nanoTime();
        private Controller controller;
        private ScheduledFuture<?> timer;
        private boolean over;

        QidWait(Request req, int qid, Consumer<QidWait> again) {
            this.req = req;
            this.qid = qid;
            this.again = again;
        }

        /** Registered with {@code c}: the deadline starts (the Connect's queue thread). */
        void start(Controller c) {
            controller = c;
            timer = req.queue().executor().schedule(this::expired, QID_WAIT_MS, TimeUnit.MILLISECONDS);
        }

        /** The holder was detached, or the controller destroyed (that thread): on to the Connect's queue thread. */
        @Override
        public void run() {
            req.queue().executor().execute(this::freed);
        }

        private void freed() {
            if (!over) {
                over = true;
                timer.cancel(false);
                again.accept(this);
            }
        }

        private void expired() {
            if (!over) {
                over = true;
                controller.stopWaiting(qid, this);
                again.accept(this);
            }
        }

        long waitedMillis() {
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        }
    }

    /** Logs a refused Connect (rate-limited) and fails it as {@link #rejectConnect} does. */
    private static void refuse(Request req, String subnqn, String hostnqn, int qid, String reason, int status,
                               boolean inData, int offset) {
        refused(req, subnqn, hostnqn, qid, reason);
        rejectConnect(req, status, inData, offset);
    }

    private static void refused(Request req, String subnqn, String hostnqn, int qid, String reason) {
        Queue q = req.queue();
        ControllerLog.refused(subnqn, hostnqn, q.peer(), q.listenerTransport(), qid, reason);
    }

    /**
     * Fails a Connect; dw0 carries IATTR (bit 16: the offset is in the Connect data, not the SQE) and
     * IPO (bits 15:0), as NVMe-oF 1.1 figure 21 describes.
     */
    private static void rejectConnect(Request req, int status, boolean inData, int offset) {
        if (offset != Request.NO_ERROR_LOCATION) {
            req.dw0 = (inData ? 1 << 16 : 0) | offset;
        }
        req.fail(status, offset);
    }

    // ---- Property Get / Set ----

    private void executePropertyGet(Request req) {
        Controller c = req.controller();
        boolean eightBytes = (req.sqe.u8(40) & 0x7) == 1;
        int offset = req.sqe.u32(44);
        long value;
        if (offset == PROP_CAP && eightBytes) {
            value = capabilities(req.queue());
        } else if (!eightBytes && offset == PROP_VS) {
            value = NVME_VERSION;
        } else if (!eightBytes && offset == PROP_CC) {
            value = c.cc() & 0xFFFFFFFFL;
        } else if (!eightBytes && offset == PROP_CSTS) {
            value = c.csts() & 0xFFFFFFFFL;
        } else {
            req.fail(NvmeStatus.INVALID_FIELD, 44);
            return;
        }
        req.dw0 = (int) value;
        req.dw1 = (int) (value >>> 32);
        req.complete(NvmeStatus.SUCCESS);
    }

    /**
     * CAP: MQES, CQR, TO, CSS (NVM command set), MPSMIN = MPSMAX = 4 KiB. TO covers the Command Quiesce Time: after
     * CC.EN is cleared CSTS.RDY stays set until the controller's device commands have ended (Controller#writeCc),
     * and a host gives up on a reset that takes longer than TO.
     */
    static long capabilities(Queue queue) {
        long mqes = queue.limits().maxQueueDepth() - 1;
        Controller c = queue.controller();
        long to = c == null ? CAP_TO : Math.min(0xFF, Math.max(CAP_TO, (c.quiesceTimeMs() + 499) / 500 + 1));
        return mqes | (1L << 16) | (to << 24) | (1L << 37);
    }

    private void executePropertySet(Request req) {
        Controller c = req.controller();
        boolean eightBytes = (req.sqe.u8(40) & 0x7) == 1;
        int offset = req.sqe.u32(44);
        int value = (int) req.sqe.u64(48);
        if (offset != PROP_CC || eightBytes) {
            // CAP, VS and CSTS are read-only; nothing else exists
            req.fail(NvmeStatus.INVALID_FIELD, 44);
            return;
        }
        c.writeCc(value);
        req.complete(NvmeStatus.SUCCESS);
    }

    // ---- Disconnect ----

    private void executeDisconnect(Request req) {
        Queue q = req.queue();
        Controller c = q.controller();
        req.complete(NvmeStatus.SUCCESS);
        c.detachIoQueue(q.qid(), q);
        q.disconnect("host sent Disconnect");
    }
}
