package io.nvmf4j.core;

import io.nvmf4j.auth.AuthPolicy;
import io.nvmf4j.auth.AuthSession;
import io.nvmf4j.auth.HostKeys;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.engine.ControllerLog;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.nvme.NvmeStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * A dynamic controller: created by an admin-queue Connect with cntlid 0xFFFF, destroyed when its admin
 * queue goes away, its keep-alive timer expires or the target stops.
 *
 * <p>Owned by the admin queue's poll group thread: CC/CSTS, features, AER slots, pending events and
 * the changed-NS list are touched only there. I/O queues (other threads) attach under the monitor at
 * Connect time and mark activity with an opaque write; the error log is synchronized (error path only).
 */
public final class Controller implements io.nvmf4j.engine.IoController {
    private static final Logger LOG = LoggerFactory.getLogger(Controller.class);
    private static final VarHandle LAST_ACTIVITY;

    static {
        try {
            LAST_ACTIVITY = MethodHandles.lookup().findVarHandle(Controller.class, "lastActivityNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Asynchronous Event Request Limit (0's based): four AERs may be outstanding. */
    public static final int AERL = 3;
    public static final int ERROR_LOG_ENTRIES = 64;
    public static final int CHANGED_NS_MAX = 1024;

    /** AEN: Notice, Namespace Attribute Changed, log page 04h. */
    public static final int AEN_NS_CHANGED = 0x2 | (0x00 << 8) | (0x04 << 16);
    /** AEN: Notice, Discovery Log Page Change, log page 70h. */
    public static final int AEN_DISCOVERY_CHANGED = 0x2 | (0xF0 << 8) | (0x70 << 16);
    /** AEN: Notice, Asymmetric Namespace Access Change, log page 0Ch. */
    public static final int AEN_ANA_CHANGE = 0x2 | (0x03 << 8) | (0x0C << 16);
    /** Async Event Configuration bits that enable the events above. */
    public static final int AEC_NS_ATTRIBUTE = 1 << 8;
    public static final int AEC_ANA_CHANGE = 1 << 11;
    public static final int AEC_DISCOVERY_LOG = 1 << 31;

    private final Subsystem subsystem;
    private final int cntlid;
    private final String hostnqn;
    private final byte[] hostid;
    /** The host identifier as two big-endian longs, for the allocation-free reservation check. */
    private final long hostIdHi;
    private final long hostIdLo;
    private final Queue adminQueue;
    private final TransportLimits limits;
    private final Queue[] ioQueues;
    /**
     * Per qid, the Connect waiting for the queue that holds the qid to be detached, or null (under the monitor):
     * see {@link #attachIoQueue}.
     */
    private final Runnable[] qidWaiters;
    /** The ANA states of the listener the host connected through (read by every queue of this controller). */
    private final AnaPort ana;
    private final AtomicBoolean destroyed = new AtomicBoolean();
    /**
     * Commands of this controller that run on a namespace's device now (counted from their execution to their
     * completion, any poll-group thread); after {@link #destroy} and after CC.EN is cleared they are waited for,
     * up to the Command Quiesce Time ({@link DeviceQuiesce}).
     */
    private final LongAdder deviceCommands = new LongAdder();
    /** The Command Quiesce Time this controller reports and keeps (Target#commandQuiesceTimeMs). */
    private final int quiesceTimeMs;
    private final IoObserver observer;
    /** DH-HMAC-CHAP: the host's keys when it must authenticate (null: no authentication), and each queue's state. */
    private volatile HostKeys hostKeys;
    private volatile boolean authRequired;
    private final AuthSession[] authSessions;
    /** Negotiates that restarted an unfinished exchange, on any queue of this controller. */
    private final java.util.concurrent.atomic.AtomicInteger authRestarts = new java.util.concurrent.atomic.AtomicInteger();
    /** How many Negotiates may restart an unfinished exchange over the controller's life; one more fails its queue. */
    public static final int MAX_AUTH_RESTARTS = 3;

    /** CC.EN, CC.SHN (bits 15:14) and CSTS.RDY, CSTS.CFS, CSTS.SHST (bits 3:2). */
    public static final int CC_EN = 0x1;
    public static final int CSTS_RDY = 0x1;
    public static final int CSTS_CFS = 0x2;
    public static final int CSTS_SHST_MASK = 0xC;
    public static final int CSTS_SHST_PROCESSING = 0x1 << 2;
    public static final int CSTS_SHST_COMPLETE = 0x2 << 2;

    // Admin-thread state (cc and csts are read by I/O queues too)
    private volatile int cc;
    private volatile int csts;
    /** The shutdown whose flushes are under way, or null. */
    private ShutdownFlush shutdown;
    /** The wait for the device commands after CC.EN was cleared (CSTS.RDY stays set until it ends), or null. */
    private DeviceQuiesce resetQuiesce;
    public int aecConfig;
    public long timestampOriginMillis = -1;
    public long timestampSetAtNanos;
    private volatile int grantedIoQueues;
    private int kato;
    private final ArrayDeque<Request> aerSlots = new ArrayDeque<>();
    private final ArrayDeque<Integer> pendingEvents = new ArrayDeque<>();
    private int maskedLogPages;
    private final ReservationNotices reservationNotices = new ReservationNotices();
    private final int[] changedNs = new int[CHANGED_NS_MAX];
    private int changedNsCount;
    private ScheduledFuture<?> keepAliveTask;
    /** I/O queues connected over its life (under the monitor), for the disconnect log line. */
    private int ioQueuesConnected;
    private final long createdNanos = System.nanoTime();

    @SuppressWarnings("unused") // through LAST_ACTIVITY
    private long lastActivityNanos;

    // Error log (any thread, error path only)
    private final long[] errCount = new long[ERROR_LOG_ENTRIES];
    private final int[] errSqid = new int[ERROR_LOG_ENTRIES];
    private final int[] errCid = new int[ERROR_LOG_ENTRIES];
    private final int[] errStatus = new int[ERROR_LOG_ENTRIES];
    private final int[] errLocation = new int[ERROR_LOG_ENTRIES];
    private final long[] errLba = new long[ERROR_LOG_ENTRIES];
    private final int[] errNsid = new int[ERROR_LOG_ENTRIES];
    private long errorCount;

    /** Builds a controller once the subsystem has picked its cntlid. */
    @FunctionalInterface
    public interface Factory {
        Controller create(Subsystem subsystem, int cntlid);
    }

    public Controller(Subsystem subsystem, int cntlid, String hostnqn, byte[] hostid, Queue adminQueue, int kato,
                      IoObserver observer, int quiesceTimeMs) {
        this.subsystem = subsystem;
        this.quiesceTimeMs = quiesceTimeMs;
        this.observer = observer;
        this.cntlid = cntlid;
        this.hostnqn = hostnqn;
        this.hostid = hostid.clone();
        java.nio.ByteBuffer id = java.nio.ByteBuffer.wrap(this.hostid);
        this.hostIdHi = id.getLong(0);
        this.hostIdLo = id.getLong(8);
        this.adminQueue = adminQueue;
        this.limits = adminQueue.limits();
        this.ioQueues = new Queue[limits.maxIoQueues() + 1];
        this.qidWaiters = new Runnable[ioQueues.length];
        this.authSessions = new AuthSession[ioQueues.length];
        this.grantedIoQueues = limits.maxIoQueues();
        this.kato = kato;
        this.ana = adminQueue.listener() == null ? new AnaPort() : subsystem.anaPort(adminQueue.listener());
        touch();
    }

    /** The ANA states this controller reports: its listener's. */
    public AnaPort ana() {
        return ana;
    }

    /** An ANA state of its listener changed: the ANA change AEN (log page 0Ch), if the host enabled it; any thread. */
    public void anaChanged() {
        if (!destroyed.get()) {
            adminQueue.executor().execute(() -> raiseEvent(AEN_ANA_CHANGE, AEC_ANA_CHANGE));
        }
    }

    @Override
    public String subsystemNqn() {
        return subsystem.nqn();
    }

    public Subsystem subsystem() {
        return subsystem;
    }

    @Override
    public int cntlid() {
        return cntlid;
    }

    @Override
    public String hostnqn() {
        return hostnqn;
    }

    public byte[] hostid() {
        return hostid.clone();
    }

    public long hostIdHi() {
        return hostIdHi;
    }

    public long hostIdLo() {
        return hostIdLo;
    }

    /** Whether this controller's host is host (hi, lo). */
    public boolean isHost(long hi, long lo) {
        return hostIdHi == hi && hostIdLo == lo;
    }

    /** Reservation notifications of this controller (admin thread). */
    public ReservationNotices reservationNotices() {
        return reservationNotices;
    }

    public Queue adminQueue() {
        return adminQueue;
    }

    public TransportLimits limits() {
        return limits;
    }

    public boolean isDiscovery() {
        return subsystem.isDiscovery();
    }

    @Override
    public boolean isDestroyed() {
        return destroyed.get();
    }

    public int kato() {
        return kato;
    }

    public boolean enabledAndReady() {
        return (cc & CC_EN) != 0 && (csts & CSTS_RDY) != 0;
    }

    public int cc() {
        return cc;
    }

    public int csts() {
        return csts;
    }

    // ---- CC / CSTS state machine (admin thread) ----

    /**
     * Property Set CC: enable (CSTS.RDY, or CSTS.CFS for settings this controller cannot run with), reset
     * (CC.EN cleared: I/O queues are disconnected) and shutdown (CC.SHN: CSTS.SHST processing while every
     * namespace's device flushes, then complete).
     */
    public void writeCc(int value) {
        int old = cc;
        cc = value;
        boolean wasEnabled = (old & CC_EN) != 0;
        boolean enable = (value & CC_EN) != 0;
        if (enable && !wasEnabled) {
            resetQuiesce = null;
            if (supportedCc(value)) {
                csts |= CSTS_RDY;
            } else {
                LOG.warn("{}: CC 0x{} enables with unsupported CSS/MPS/IOSQES/IOCQES: controller fatal status", this,
                    Integer.toHexString(value));
                csts |= CSTS_CFS;
            }
        } else if (!enable && wasEnabled) {
            csts &= ~CSTS_CFS;
            for (Queue q : ioQueues()) {
                detachIoQueue(q.qid(), q);
                q.disconnect("controller reset (CC.EN cleared)");
            }
            // CSTS.RDY clears once the commands already on a device have ended (or the CQT passed): a host that
            // waits for RDY 0 before it resubmits elsewhere cannot race them
            DeviceQuiesce wait = new DeviceQuiesce(this, "controller reset (CC.EN cleared)", this::resetQuiesced);
            resetQuiesce = wait;
            wait.start(adminQueue.executor());
        }
        int shn = (value >>> 14) & 0x3;
        int oldShn = (old >>> 14) & 0x3;
        if (shn != 0 && oldShn == 0) {
            startShutdown();
        } else if (shn == 0 && oldShn != 0) {
            shutdown = null;
            csts &= ~CSTS_SHST_MASK;
        }
    }

    /** The device commands started before CC.EN was cleared have ended (or the bound passed): CSTS.RDY clears. */
    private void resetQuiesced(DeviceQuiesce wait) {
        if (resetQuiesce == wait) {
            resetQuiesce = null;
            if ((cc & CC_EN) == 0) {
                csts &= ~CSTS_RDY;
            }
        }
    }

    /**
     * CSS NVM, 4 KiB pages; I/O controllers also need 64-byte SQEs and 16-byte CQEs. A discovery controller has
     * no I/O queues, and hosts enable it with IOSQES = IOCQES = 0 (nvmet exempts discovery the same way).
     */
    private boolean supportedCc(int value) {
        int css = (value >>> 4) & 0x7;
        int mps = (value >>> 7) & 0xF;
        int iosqes = (value >>> 16) & 0xF;
        int iocqes = (value >>> 20) & 0xF;
        return css == 0 && mps == 0 && (isDiscovery() || (iosqes == 6 && iocqes == 4));
    }

    /** CC.SHN set: SHST processing, a flush of every namespace's device, then SHST complete. */
    private void startShutdown() {
        csts = (csts & ~CSTS_SHST_MASK) | CSTS_SHST_PROCESSING;
        ShutdownFlush round = new ShutdownFlush(this);
        shutdown = round;
        round.start(subsystem.namespaces());
    }

    /** Every flush of {@code round} completed (admin thread); a round replaced by a later CC write is ignored. */
    void shutdownFlushed(ShutdownFlush round) {
        if (shutdown == round) {
            shutdown = null;
            csts = (csts & ~CSTS_SHST_MASK) | CSTS_SHST_COMPLETE;
        }
    }

    // ---- commands on the devices ----

    /**
     * Counts one command in (Request#countIn) before it touches a namespace's device (poll-group thread); false
     * (nothing counted) once the controller is torn down or CC.EN is cleared: the command must not start. The
     * increment comes before the reads of the flags and teardown writes them before it reads the count, so
     * either the command sees the teardown or the teardown waits for the command.
     */
    boolean deviceCommandStarting() {
        deviceCommands.increment();
        if (destroyed.get() || (cc & CC_EN) == 0) {
            deviceCommands.decrement();
            return false;
        }
        return true;
    }

    /**
     * Counts a command out of its device; once per successful {@link #deviceCommandStarting}, by the command's
     * completion (Request#complete, the only caller of either).
     */
    void deviceCommandEnded() {
        deviceCommands.decrement();
    }

    /** Commands of this controller on a device now. */
    public long deviceCommands() {
        return deviceCommands.sum();
    }

    /** The Command Quiesce Time in milliseconds (Identify Controller CQT), the bound of {@link DeviceQuiesce}. */
    public int quiesceTimeMs() {
        return quiesceTimeMs;
    }

    // ---- I/O queues ----

    public int grantedIoQueues() {
        return grantedIoQueues;
    }

    /** Number of Queues feature: grants min(asked, limit); returns the granted count. */
    public int grantIoQueues(int asked) {
        grantedIoQueues = Math.max(1, Math.min(asked, limits.maxIoQueues()));
        return grantedIoQueues;
    }

    /** {@link #attachIoQueue}: the queue holds its qid now. */
    public static final int ATTACHED = 0;
    /** {@link #attachIoQueue}: another queue holds the qid (or the controller is destroyed); nothing waits. */
    public static final int QID_TAKEN = 1;
    /** {@link #attachIoQueue}: another queue holds the qid; {@code whenFree} runs once that queue is detached. */
    public static final int QID_WAITING = 2;

    /**
     * Attaches I/O queue {@code q} as {@code qid}: {@link #ATTACHED}. When another queue holds the qid and
     * {@code whenFree} is given and no other Connect waits for that qid, {@link #QID_WAITING}: {@code whenFree}
     * runs once, on the thread that detaches the holder (its poll group when its connection closed) or destroys the
     * controller, unless {@link #stopWaiting} withdraws it first. Else {@link #QID_TAKEN}.
     *
     * <p>A host may use a qid again as soon as it has deleted the queue; the target learns of the deletion (the
     * connection's close) on the old queue's poll group, which may run after the new Connect arrived on another.
     */
    public synchronized int attachIoQueue(int qid, Queue q, Runnable whenFree) {
        if (destroyed.get()) {
            return QID_TAKEN;
        }
        if (ioQueues[qid] == null) {
            ioQueues[qid] = q;
            ioQueuesConnected++;
            return ATTACHED;
        }
        if (whenFree == null || qidWaiters[qid] != null) {
            return QID_TAKEN;
        }
        qidWaiters[qid] = whenFree;
        return QID_WAITING;
    }

    /** Withdraws {@code whenFree} if it still waits for {@code qid} (it then does not run). */
    public synchronized void stopWaiting(int qid, Runnable whenFree) {
        if (qidWaiters[qid] == whenFree) {
            qidWaiters[qid] = null;
        }
    }

    /** Frees {@code qid} if {@code q} holds it, and runs the Connect waiting for it, if any (any thread). */
    public void detachIoQueue(int qid, Queue q) {
        Runnable waiter;
        synchronized (this) {
            if (qid <= 0 || qid >= ioQueues.length || ioQueues[qid] != q) {
                return;
            }
            ioQueues[qid] = null;
            waiter = qidWaiters[qid];
            qidWaiters[qid] = null;
        }
        if (waiter != null) {
            waiter.run();
        }
    }

    /** The I/O queue that holds {@code qid}, or null. */
    public synchronized Queue ioQueue(int qid) {
        return qid > 0 && qid < ioQueues.length ? ioQueues[qid] : null;
    }

    public synchronized List<Queue> ioQueues() {
        List<Queue> out = new ArrayList<>();
        for (Queue q : ioQueues) {
            if (q != null) {
                out.add(q);
            }
        }
        return out;
    }

    // ---- keep alive ----

    /** Marks traffic (Traffic Based Keep Alive): any command on any queue of this controller. */
    public void touch() {
        touch(System.nanoTime());
    }

    /** {@link #touch()} with a clock reading the caller already has ({@link System#nanoTime()}). */
    public void touch(long nowNanos) {
        LAST_ACTIVITY.setOpaque(this, nowNanos);
    }

    /** Starts the keep-alive timer on the admin queue's thread; kato 0 disables it. */
    public void startKeepAlive() {
        rescheduleKeepAlive();
    }

    public void setKato(int katoMillis) {
        this.kato = katoMillis;
        rescheduleKeepAlive();
    }

    private void rescheduleKeepAlive() {
        if (keepAliveTask != null) {
            keepAliveTask.cancel(false);
            keepAliveTask = null;
        }
        if (kato > 0 && !destroyed.get()) {
            long period = Math.max(50, kato / 4);
            keepAliveTask = adminQueue.executor().scheduleAtFixedRate(this::checkKeepAlive, period, period,
                TimeUnit.MILLISECONDS);
        }
    }

    private void checkKeepAlive() {
        long idle = System.nanoTime() - (long) LAST_ACTIVITY.getOpaque(this);
        if (idle > TimeUnit.MILLISECONDS.toNanos(kato)) {
            LOG.warn("controller {} of {} (host {}): keep-alive timeout ({} ms without a command), tearing it down",
                cntlid, subsystem.nqn(), hostnqn, kato);
            destroy("keep-alive timeout");
            observer.keepAliveExpired(subsystem.nqn());
        }
    }

    // ---- asynchronous events (admin thread) ----

    /**
     * Holds an Async Event Request; returns false when the limit is reached. After {@link #destroy} it is
     * aborted at once: nothing would ever complete it, and a transport that drains its requests before
     * freeing the queue (RDMA) would wait for it forever.
     */
    public boolean holdAer(Request req) {
        if (destroyed.get()) {
            req.complete(NvmeStatus.ABORTED_SQ_DELETION);
            return true;
        }
        if (aerSlots.size() > AERL) {
            return false;
        }
        aerSlots.add(req);
        deliverEvents();
        return true;
    }

    /** Queues an event (dw0 of the AER completion) and delivers it if a slot waits; admin thread. */
    public void raiseEvent(int dw0, int aecBit) {
        if ((aecConfig & aecBit) == 0) {
            return;
        }
        queueEvent(dw0);
    }

    /**
     * Records a reservation notification (not masked for its namespace) at once and raises the reservation log
     * page event, which no Async Event Configuration bit gates, on the admin thread; any thread.
     */
    public void reservationNotice(int type, int nsid) {
        if (reservationNotices.add(type, nsid) && !destroyed.get()) {
            adminQueue.executor().execute(() -> queueEvent(ReservationNotices.AEN_RESERVATION_LOG));
        }
    }

    private void queueEvent(int dw0) {
        int lid = (dw0 >>> 16) & 0xFF;
        if ((maskedLogPages & logPageMaskBit(lid)) != 0 || pendingEvents.contains(dw0)) {
            return;
        }
        pendingEvents.add(dw0);
        deliverEvents();
    }

    private void deliverEvents() {
        while (!aerSlots.isEmpty() && !pendingEvents.isEmpty()) {
            int dw0 = pendingEvents.poll();
            maskedLogPages |= logPageMaskBit((dw0 >>> 16) & 0xFF);
            Request aer = aerSlots.poll();
            aer.dw0 = dw0;
            aer.complete(NvmeStatus.SUCCESS);
        }
    }

    /** A log page read without Retain Asynchronous Event unmasks its events. */
    public void logPageRead(int lid) {
        maskedLogPages &= ~logPageMaskBit(lid);
        if (lid == ReservationNotices.LID && reservationNotices.available() > 0) {
            queueEvent(ReservationNotices.AEN_RESERVATION_LOG); // more pages wait: tell the host again
        }
    }

    private static int logPageMaskBit(int lid) {
        return lid == 0x70 ? 1 << 31 : lid == ReservationNotices.LID ? 1 << 30 : 1 << (lid & 0x1F);
    }

    /**
     * Records a changed namespace for log page 04h and raises the AEN; admin thread. An NSID already listed is not
     * listed twice; the first NSID beyond {@value #CHANGED_NS_MAX} distinct ones turns the list into its overflow
     * form, one 0xFFFFFFFF entry, until the host reads the page.
     */
    public void namespaceChanged(int nsid) {
        if (!changedNsOverflowed() && !changedNsListed(nsid)) {
            if (changedNsCount == CHANGED_NS_MAX) {
                changedNs[0] = -1;
                changedNsCount = 1;
            } else {
                changedNs[changedNsCount++] = nsid;
            }
        }
        raiseEvent(AEN_NS_CHANGED, AEC_NS_ATTRIBUTE);
    }

    private boolean changedNsOverflowed() {
        return changedNsCount == 1 && changedNs[0] == -1;
    }

    private boolean changedNsListed(int nsid) {
        for (int i = 0; i < changedNsCount; i++) {
            if (changedNs[i] == nsid) {
                return true;
            }
        }
        return false;
    }

    /**
     * Log page 04h was read, with or without Retain Asynchronous Event: the list starts empty again ("changed since
     * the log page was last read"; nvmet and SPDK clear it on every read too). RAE only decides the event's mask.
     */
    public void changedNamespacesRead() {
        changedNsCount = 0;
    }

    /** Changed namespaces in ascending order (or one 0xFFFFFFFF entry after overflow). */
    public int[] changedNamespaces() {
        int[] out = java.util.Arrays.copyOf(changedNs, changedNsCount);
        if (out.length > 1) {
            java.util.Arrays.sort(out);
        }
        return out;
    }

    // ---- error log ----

    public synchronized void recordError(int sqid, int cid, int status, int location, long lba, int nsid) {
        errorCount++;
        int i = (int) (errorCount % ERROR_LOG_ENTRIES);
        errCount[i] = errorCount;
        errSqid[i] = sqid;
        errCid[i] = cid;
        errStatus[i] = status;
        errLocation[i] = location;
        errLba[i] = lba;
        errNsid[i] = nsid;
    }

    /** Visits error entries newest first: (count, sqid, cid, status, location, lba, nsid). */
    public synchronized void forEachError(ErrorVisitor v) {
        long n = Math.min(errorCount, ERROR_LOG_ENTRIES);
        for (long k = 0; k < n; k++) {
            int i = (int) ((errorCount - k) % ERROR_LOG_ENTRIES);
            v.visit(errCount[i], errSqid[i], errCid[i], errStatus[i], errLocation[i], errLba[i], errNsid[i]);
        }
    }

    /** Receives one error-log entry. */
    @FunctionalInterface
    public interface ErrorVisitor {
        void visit(long count, int sqid, int cid, int status, int location, long lba, int nsid);
    }

    // ---- in-band authentication (DH-HMAC-CHAP) ----

    /** The host must authenticate every queue with {@code keys} (set at the admin Connect, before any queue binds). */
    public void requireAuthentication(HostKeys keys) {
        this.hostKeys = keys;
        this.authRequired = true;
    }

    /** Whether the host must authenticate its queues (the Connect response's AUTHREQ.ATR). */
    public boolean authRequired() {
        return authRequired;
    }

    /** Whether queue {@code qid} may run commands other than Fabrics ones (as nvmet_check_auth_status). */
    public boolean authenticated(int qid) {
        if (!authRequired) {
            return true;
        }
        AuthSession s = qid < authSessions.length ? authSessions[qid] : null;
        return s != null && s.authenticated();
    }

    /**
     * The authentication state of queue {@code qid}, created at its first Authentication Send or Receive (queue
     * thread). The admin queue's session reads the key files again at each Negotiate (re-authentication, rotation).
     */
    public AuthSession authSession(int qid, Queue queue) {
        AuthSession s = authSessions[qid];
        if (s == null) {
            s = new AuthSession(hostnqn, subsystem.nqn(), qid == 0, new AuthSession.KeySource() {
                @Override
                public HostKeys keys() {
                    return hostKeys;
                }

                @Override
                public HostKeys reload() throws java.io.IOException {
                    HostKeyConfig c = subsystem.hostKey(hostnqn);
                    hostKeys = c == null || c.dhchapKey == null ? null : HostKeys.read(c.dhchapKey, c.dhchapCtrlKey);
                    return hostKeys;
                }

                @Override
                public AuthPolicy policy() {
                    return authPolicy(subsystem.hostKey(hostnqn));
                }

                @Override
                public boolean restart() {
                    return authRestarts.incrementAndGet() <= MAX_AUTH_RESTARTS;
                }
            }, kato);
            authSessions[qid] = s;
        }
        return s;
    }

    /** The hashes and DH groups the host of {@code keys} may use (none without an entry). */
    static AuthPolicy authPolicy(HostKeyConfig keys) {
        return keys == null ? new AuthPolicy(0, 0)
            : AuthPolicy.of(keys.dhchapHashes, keys.dhchapDhGroups, keys.dhchapCtrlKey != null);
    }

    /**
     * Starts queue {@code qid}'s authentication deadline at its Connect (queue thread): a queue that has not
     * authenticated {@code timeoutMs} later is failed, whatever its KATO and whether the host sends anything. On the
     * admin queue that ends the controller; an I/O queue goes alone (its controller's host may be elsewhere).
     */
    public void startAuthDeadline(int qid, Queue queue, int timeoutMs) {
        queue.executor().schedule(() -> authDeadline(qid, queue, timeoutMs), timeoutMs, TimeUnit.MILLISECONDS);
    }

    private void authDeadline(int qid, Queue queue, int timeoutMs) {
        if (destroyed.get() || queue.controller() != this || queue.qid() != qid || queue.isClosed()
            || authenticated(qid)) {
            return;
        }
        String reason = "authentication not finished within " + timeoutMs + " ms of the Connect (authTimeoutMs)";
        ControllerLog.authFailed(subsystem.nqn(), hostnqn, queue.peer(), queue.listenerTransport(), cntlid, qid,
            reason);
        observer.authFailed(subsystem.nqn(), io.nvmf4j.auth.AuthMessages.reason(io.nvmf4j.auth.AuthMessages.FAILED));
        if (qid == 0) {
            destroy(reason);
        } else {
            detachIoQueue(qid, queue);
            queue.disconnect(reason);
        }
    }

    /** Forgets queue {@code qid}'s authentication (its queue is gone; a new Connect of that qid starts afresh). */
    public void clearAuthSession(int qid) {
        if (qid < authSessions.length) {
            authSessions[qid] = null;
        }
    }

    public IoObserver observer() {
        return observer;
    }

    // ---- teardown ----

    /**
     * Tears the controller down: unregisters it and disconnects every queue; its cntlid is released once the
     * commands it started on a device have ended ({@link DeviceQuiesce}). Thread-safe, idempotent.
     */
    public void destroy(String reason) {
        if (!destroyed.compareAndSet(false, true)) {
            return;
        }
        // out of the live controllers; its cntlid stays taken, and a new controller of its host waits, until
        // the commands it started on a device have ended (or the Command Quiesce Time passed)
        subsystem.startQuiesce(this);
        new DeviceQuiesce(this, reason, w -> subsystem.endQuiesce(this)).start(adminQueue.executor());
        adminQueue.executor().execute(() -> {
            if (keepAliveTask != null) {
                keepAliveTask.cancel(false);
            }
            abortAers();
        });
        List<Queue> queues;
        List<Runnable> waiters = new ArrayList<>();
        synchronized (this) {
            queues = ioQueues();
            java.util.Arrays.fill(ioQueues, null);
            for (Runnable w : qidWaiters) {
                if (w != null) {
                    waiters.add(w);
                }
            }
            java.util.Arrays.fill(qidWaiters, null);
        }
        for (Queue q : queues) {
            q.disconnect(reason);
        }
        // the Connects waiting for a qid look again, and find the controller gone
        waiters.forEach(Runnable::run);
        adminQueue.disconnect(reason);
        int connected;
        synchronized (this) {
            connected = ioQueuesConnected;
        }
        ControllerLog.disconnected(subsystem.nqn(), cntlid, hostnqn, adminQueue.peer(), adminQueue.listenerTransport(),
            connected, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - createdNanos), reason);
    }

    /** Completes the held AERs (admin thread): each request ends exactly once, also on teardown. */
    private void abortAers() {
        Request aer;
        while ((aer = aerSlots.poll()) != null) {
            aer.complete(NvmeStatus.ABORTED_SQ_DELETION);
        }
    }

    @Override
    public String toString() {
        return "controller " + cntlid + " of " + subsystem.nqn() + " (host " + hostnqn + ")";
    }
}
