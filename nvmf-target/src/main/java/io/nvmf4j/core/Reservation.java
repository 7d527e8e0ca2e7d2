package io.nvmf4j.core;

import io.nvmf4j.nvme.NvmeStatus;

import java.util.ArrayList;
import java.util.List;

/**
 * The persistent reservation of one namespace (NVMe base specification, "Reservations"): the registrants
 * (one per host, keyed by the 128-bit host identifier, so every controller of a host shares its registration),
 * the reservation holder and type, the generation and the Persist Through Power Loss state.
 *
 * <p>Reservation commands change it under the monitor (any poll-group thread; they are rare). The I/O path
 * reads one immutable {@link State} through a volatile field and allocates nothing: {@link #checkAccess}.
 * A change that is to survive a restart (PTPL on) is written through the {@link Store} before the command
 * completes; a store that fails leaves the state as it was and the command ends with Internal Error. The
 * commands that change it run off the poll-group threads when there is a store (its fsync would stall every
 * queue of the poll group): see ReservationCommands.
 */
public final class Reservation {
    /** Reservation types (RTYPE). */
    public static final int WRITE_EXCLUSIVE = 1;
    public static final int EXCLUSIVE_ACCESS = 2;
    public static final int WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 3;
    public static final int EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 4;
    public static final int WRITE_EXCLUSIVE_ALL_REGISTRANTS = 5;
    public static final int EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 6;

    /** Reservation Register Action (RREGA), Acquire Action (RACQA), Release Action (RRELA). */
    public static final int REGISTER = 0;
    public static final int UNREGISTER = 1;
    public static final int REPLACE = 2;
    public static final int ACQUIRE = 0;
    public static final int PREEMPT = 1;
    public static final int PREEMPT_AND_ABORT = 2;
    public static final int RELEASE = 0;
    public static final int CLEAR = 1;

    /** Change Persist Through Power Loss State (CPTPL): 00b no change, 10b clear, 11b set (01b reserved). */
    public static final int CPTPL_NO_CHANGE = 0;
    public static final int CPTPL_CLEAR = 2;
    public static final int CPTPL_SET = 3;

    /** Reservation Notification log page types. */
    public static final int NOTICE_REGISTRATION_PREEMPTED = 1;
    public static final int NOTICE_RESERVATION_RELEASED = 2;
    public static final int NOTICE_RESERVATION_PREEMPTED = 3;

    /** Host Identifier Inconsistent Format (generic 18h): fabrics host identifiers are 128-bit, so EDS must be 1. */
    public static final int HOST_ID_INCONSISTENT_FORMAT = NvmeStatus.DNR | 0x18;
    /** Reservation Conflict (generic 83h). */
    public static final int CONFLICT = NvmeStatus.DNR | 0x83;
    /**
     * Namespace Not Ready (generic 82h) without DNR: a change that takes access away could neither reach every other
     * target nor fence the one it could not reach, and was undone; the same command may succeed when sent again.
     */
    public static final int NOT_FENCED = NvmeStatus.NAMESPACE_NOT_READY & ~NvmeStatus.DNR;

    /** Writes the state of a namespace whose PTPL is on, or removes it when PTPL goes off. */
    public interface Store {
        /** Writes {@code state} durably (atomically replacing the previous one) before returning. */
        void save(State state) throws java.io.IOException;

        /** Removes the saved state (PTPL turned off): a restart begins with no registrants. */
        void delete() throws java.io.IOException;
    }

    /**
     * Where the state of a namespace that several targets serve is kept (an RBD image's metadata): every
     * command reads it fresh and writes its change back only if nobody changed it since ({@link #compareAndSet}),
     * or reads it again and starts over; then {@link #announce}s the change to the other targets, which
     * {@link #refresh} before they acknowledge (and drain first when the change takes access away). Kept whatever
     * PTPL says: the other targets still serve the namespace, so one target's restart is no power loss of it.
     *
     * <p>With the state it keeps a journal of the notices the changes caused, numbered: a target that reads a
     * state hands the notices numbered after the last it knew to its controllers ({@link #onRemoteNotices}),
     * so the hosts connected through it hear of changes made through another target, also of those whose
     * announcement it missed (a broken watch: it reads the state again).
     */
    public interface Shared {
        /** The state kept now, the bytes it was read from (null bytes, EMPTY state: none kept yet) and the journal. */
        Kept read() throws java.io.IOException;

        /**
         * Writes {@code next}, with {@code expected}'s journal plus {@code notices} (numbered on from its last), if
         * what is kept is still {@code expected}'s bytes: what is kept now; null when another target changed it.
         */
        Kept compareAndSet(Kept expected, State next, List<Notice> notices) throws java.io.IOException;

        /**
         * Tells the other targets that the state changed and waits (bounded) until each has taken it in, or has been
         * fenced off the shared store (it can no longer reach it, so none of its commands can land). Throws when a
         * target did neither: it may still run commands against the old state.
         */
        void announce() throws java.io.IOException;

        /**
         * After this target drained its commands for a change another target made: makes what they wrote reach the
         * shared store before the change is acknowledged (a client-side write-back window). Not on the thread that
         * delivered the change.
         */
        default void settle() throws java.io.IOException {
        }

        /** The namespace goes away here: stop listening (what is kept stays for the other targets). */
        void close();
    }

    /**
     * A kept state, the bytes it was read from (the token {@link Shared#compareAndSet} compares) and the journal:
     * the latest notices, oldest first, the last of them numbered {@code noticeSeq} (0: none ever).
     */
    public record Kept(State state, byte[] raw, long noticeSeq, List<Notice> notices) {
        public Kept {
            notices = List.copyOf(notices);
            if (noticeSeq < notices.size()) {
                throw new IllegalArgumentException("notice number " + noticeSeq + " below the journal's length "
                    + notices.size());
            }
        }

        /** A state without notices. */
        public Kept(State state, byte[] raw) {
            this(state, raw, 0, List.of());
        }
    }

    /** What a change tells other hosts: notice {@code type} for every controller of host (hi, lo). */
    public record Notice(long hostHi, long hostLo, int type) {
    }

    /**
     * One immutable state: registrants in registration order (host identifier as two longs, key), the holder's
     * host identifier (meaningful when {@code rtype != 0}), generation and PTPL.
     */
    public static final class State {
        public static final State EMPTY = new State(0, 0, 0, new long[0], new long[0], new long[0], 0, false);

        public final int rtype;
        public final long holderHi;
        public final long holderLo;
        final long[] hi;
        final long[] lo;
        final long[] keys;
        public final int generation;
        public final boolean ptpl;

        public State(int rtype, long holderHi, long holderLo, long[] hi, long[] lo, long[] keys, int generation,
                     boolean ptpl) {
            if (hi.length != lo.length || hi.length != keys.length) {
                throw new IllegalArgumentException("registrant arrays differ in length");
            }
            this.rtype = rtype;
            this.holderHi = holderHi;
            this.holderLo = holderLo;
            this.hi = hi;
            this.lo = lo;
            this.keys = keys;
            this.generation = generation;
            this.ptpl = ptpl;
        }

        public int registrants() {
            return hi.length;
        }

        public long hostHi(int i) {
            return hi[i];
        }

        public long hostLo(int i) {
            return lo[i];
        }

        public long key(int i) {
            return keys[i];
        }

        /** Index of the registrant of host (hi, lo), or -1. */
        public int indexOf(long hostHi, long hostLo) {
            for (int i = 0; i < hi.length; i++) {
                if (hi[i] == hostHi && lo[i] == hostLo) {
                    return i;
                }
            }
            return -1;
        }

        /** Whether registrant {@code i} holds the reservation (every registrant does for the All Registrants types). */
        public boolean holds(int i) {
            return rtype != 0 && (allRegistrants(rtype) || (hi[i] == holderHi && lo[i] == holderLo));
        }
    }

    /** How often a command reads the shared state again after another target changed it under it. */
    private static final int SHARED_ATTEMPTS = 32;
    /** Thrown by {@link #commit} when the shared state changed since it was read: the command runs again. */
    private static final RuntimeException CHANGED_MEANWHILE = new RuntimeException("changed meanwhile", null,
        false, false) {
    };

    private final Store store;
    private final Shared shared;
    /** What the shared state was last read as (the compare-and-set token). Guarded by this. */
    private Kept kept;
    /** The number of the last shared notice this target handed on or made itself. Guarded by this. */
    private long noticesSeen;
    /** The notices of the command running now (its list; null: it causes none). Guarded by this. */
    private List<Notice> commandNotices;
    /** Where notices of changes made through other targets go (this target's controllers of their hosts). */
    private volatile java.util.function.Consumer<List<Notice>> remoteNotices = n -> { };
    /**
     * How this target drains the commands executing on the namespace (the namespace's fence): it calls its argument
     * once they have completed. Null: none to drain (the reservation serves no namespace).
     */
    private volatile java.util.function.Consumer<Runnable> drain;
    /** Runs the changes of this namespace, one at a time; namespaces do not wait for each other. */
    private final ReservationExecutor executor = new ReservationExecutor();
    /** The latest drain for a state read from the shared store that took access away. Guarded by this. */
    private java.util.concurrent.CompletableFuture<Void> lastDrain =
        java.util.concurrent.CompletableFuture.completedFuture(null);
    private volatile State state;
    /** Set by {@link #forget}: the namespace is gone, its state is written nowhere any more. */
    private boolean forgotten;

    /** @param store where the state goes when PTPL is on; null when this target keeps none (PTPL unsupported) */
    public Reservation(Store store, State initial) {
        this.store = store;
        this.shared = null;
        this.state = initial == null ? State.EMPTY : initial;
    }

    /** A reservation kept in {@code shared} (read now; an IOException when it cannot be read). */
    public Reservation(Shared shared) throws java.io.IOException {
        this.store = null;
        this.shared = shared;
        Kept k = shared.read();
        this.kept = k;
        this.state = k.state();
        this.noticesSeen = k.noticeSeq(); // what was noticed before this target served the namespace is not news
    }

    /**
     * Where the notices of changes made through other targets go, from now on: {@code sink} gets them (on the
     * thread that read the state: a watch callback or the reservation store's) in journal order, and tells this
     * target's controllers of the hosts they name. Set once the namespace is in its subsystem.
     */
    public void onRemoteNotices(java.util.function.Consumer<List<Notice>> sink) {
        remoteNotices = sink;
    }

    /**
     * How this target drains the namespace's executing commands ({@code fence} calls its argument once they have
     * completed): started whenever a state read from the shared store takes access away (a change of another
     * target), and waited for by {@link #refresh(boolean, Runnable)} before it acknowledges. Set by the namespace that
     * uses this reservation.
     */
    public void drainWith(java.util.function.Consumer<Runnable> fence) {
        drain = fence;
    }

    /** Where the commands that change this reservation run (off the poll groups; serial per namespace). */
    public java.util.concurrent.Executor executor() {
        return executor;
    }

    /** Reads the shared state again and hands on the notices made since the last read; see below. */
    public void refresh() {
        refresh(false, () -> { });
    }

    /**
     * Reads the shared state again (another target announced a change, the watch was made again, or the target's
     * connection to the store was replaced) and hands on the notices made since the last read. Takes the monitor, so
     * it never publishes something older than a command of this target that ran meanwhile. Then {@code done} runs:
     * at once, or, while a drain for a state that took access away is under way (this read's, or an earlier one's,
     * also one a command of this target read; or one {@code drainAlways} starts), once it has finished: nothing a
     * fenced host started through this target lands after the announcing target hears {@code done}'s acknowledgement.
     */
    public void refresh(boolean drainAlways, Runnable done) {
        java.util.concurrent.CompletableFuture<Void> wait;
        synchronized (this) {
            if (shared == null || forgotten) {
                done.run();
                return;
            }
            try {
                adopt(shared.read());
            } catch (java.io.IOException e) {
                org.slf4j.LoggerFactory.getLogger(Reservation.class).error(
                    "cannot read the shared reservation state again: {}", e.getMessage());
            }
            if (drainAlways) {
                lastDrain = startDrain();
            }
            wait = lastDrain;
        }
        if (wait.isDone()) {
            done.run();
        } else {
            wait.whenComplete((v, e) -> done.run());
        }
    }

    /**
     * Drains the namespace's executing commands (its fence) and then makes what they wrote reach the shared store
     * ({@link Shared#settle}): done when both are. Fences complete in the order they start, so the latest one's end
     * means every earlier one has ended. Under the monitor.
     */
    private java.util.concurrent.CompletableFuture<Void> startDrain() {
        java.util.function.Consumer<Runnable> d = drain;
        if (d == null) {
            return lastDrain;
        }
        java.util.concurrent.CompletableFuture<Void> f = new java.util.concurrent.CompletableFuture<>();
        d.accept(() -> SETTLE.execute(() -> {
            try {
                shared.settle();
            } catch (java.io.IOException | RuntimeException e) {
                org.slf4j.LoggerFactory.getLogger(Reservation.class).warn(
                    "cannot flush the writes of the drained commands: {}", e.getMessage());
            }
            f.complete(null);
        }));
        return f;
    }

    /**
     * Where a drained change is settled and acknowledged: never behind a change of this target (whose announcement
     * may wait for the very target this acknowledgement goes to).
     */
    private static final java.util.concurrent.ExecutorService SETTLE =
        java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "nvmf4j-reservation-settle");
            t.setDaemon(true);
            return t;
        });

    /**
     * Whether some host may do less under {@code after} than under {@code before}: a registrant or holder of either,
     * or any other host (one registered in neither), loses read or write access.
     */
    static boolean revokes(State before, State after) {
        if (after.rtype == 0) {
            return false; // no reservation: every host may do everything
        }
        for (State s : new State[] {before, after}) {
            for (int i = 0; i < s.registrants(); i++) {
                if (loses(before, after, s.hi[i], s.lo[i])) {
                    return true;
                }
            }
            if (s.rtype != 0 && loses(before, after, s.holderHi, s.holderLo)) {
                return true;
            }
        }
        long other = 0;
        while (before.indexOf(0, other) >= 0 || after.indexOf(0, other) >= 0
            || (before.holderHi == 0 && before.holderLo == other) || (after.holderHi == 0 && after.holderLo == other)) {
            other++;
        }
        return loses(before, after, 0, other);
    }

    private static boolean loses(State before, State after, long hi, long lo) {
        for (boolean write : new boolean[] {false, true}) {
            if (access(before, hi, lo, write) == NvmeStatus.SUCCESS && access(after, hi, lo, write) != NvmeStatus.SUCCESS) {
                return true;
            }
        }
        return false;
    }

    /**
     * Takes a state read from the shared store as the current one, and hands the journal's notices numbered after
     * {@link #noticesSeen} (another target's changes) to {@link #remoteNotices}. Under the monitor.
     */
    private void adopt(Kept k) {
        State before = state;
        kept = k;
        state = k.state();
        if (revokes(before, state)) {
            lastDrain = startDrain(); // another target took access away: what passed the old state's checks ends
        }
        long seen = noticesSeen;
        noticesSeen = k.noticeSeq();
        if (k.noticeSeq() <= seen) {
            return; // nothing new; or the journal started over (the metadata was removed): nothing to tell
        }
        List<Notice> journal = k.notices();
        long fresh = k.noticeSeq() - seen;
        if (fresh > journal.size()) {
            org.slf4j.LoggerFactory.getLogger(Reservation.class).warn("{} reservation notice(s) of other targets"
                + " were dropped from the shared journal before this target read it", fresh - journal.size());
        }
        List<Notice> news = journal.subList(journal.size() - (int) Math.min(fresh, journal.size()), journal.size());
        try {
            remoteNotices.accept(news);
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(Reservation.class).error("cannot hand on reservation notices", e);
        }
    }

    /**
     * Runs one command: at once with a local state; with a shared one, on the state read fresh, again whenever
     * another target changed it before this one's write, and then announces the change (outside the monitor:
     * the other targets' acknowledgements may wait for their own commands). A change that takes access away from
     * some host succeeds only when every other target took it in (having drained) or was fenced; otherwise it is
     * undone and the command ends with {@link #NOT_FENCED}.
     */
    private int run(List<Notice> notices, java.util.function.IntSupplier once) {
        if (shared == null) {
            synchronized (this) {
                return once.getAsInt();
            }
        }
        for (int attempt = 0; attempt < SHARED_ATTEMPTS; attempt++) {
            int status;
            State before;
            State after;
            Kept written;
            synchronized (this) {
                if (notices != null) {
                    notices.clear();
                }
                try {
                    adopt(shared.read());
                    before = state;
                    commandNotices = notices;
                    status = once.getAsInt();
                    after = state;
                    written = kept;
                } catch (java.io.IOException e) {
                    org.slf4j.LoggerFactory.getLogger(Reservation.class).error(
                        "cannot read the shared reservation state: {}", e.getMessage());
                    return NvmeStatus.INTERNAL_ERROR;
                } catch (RuntimeException e) {
                    if (e != CHANGED_MEANWHILE) {
                        throw e;
                    }
                    continue;
                } finally {
                    commandNotices = null;
                }
            }
            if (after == before) {
                return status;
            }
            try {
                shared.announce();
            } catch (java.io.IOException e) {
                if (revokes(before, after)) {
                    return undo(written, before, e);
                }
                org.slf4j.LoggerFactory.getLogger(Reservation.class).warn("the reservation changed (no host lost"
                    + " access), but not every other target took it in: {}", e.getMessage());
            }
            return status;
        }
        org.slf4j.LoggerFactory.getLogger(Reservation.class).error(
            "the shared reservation state changed under each of {} attempts", SHARED_ATTEMPTS);
        return NvmeStatus.INTERNAL_ERROR;
    }

    /**
     * A change that takes access away ({@code written}, made from {@code before}) reached neither every other target
     * nor a fence of the ones it did not: puts {@code before} back (compare-and-set against what the change wrote) and
     * announces that, so no target keeps refusing what the failed command did not achieve. The command ends with
     * {@link #NOT_FENCED}: it changed nothing, and sent again it may succeed.
     */
    private int undo(Kept written, State before, java.io.IOException why) {
        org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Reservation.class);
        log.error("a reservation change that fences hosts out could not be enforced on every target ({}); undoing it",
            why.getMessage());
        synchronized (this) {
            try {
                Kept back = shared.compareAndSet(written, before, List.of());
                if (back == null) {
                    log.error("the reservation changed again meanwhile through another target: the change stays,"
                        + " and a target that did not take it in may still let a fenced host's commands through");
                    adopt(shared.read());
                    return NOT_FENCED;
                }
                adopt(back);
            } catch (java.io.IOException e) {
                log.error("cannot undo the reservation change: {}", e.getMessage());
                return NOT_FENCED;
            }
        }
        try {
            shared.announce();
        } catch (java.io.IOException e) {
            log.warn("the undone reservation change could not be announced to every target: {}", e.getMessage());
        }
        return NOT_FENCED;
    }

    public State state() {
        return state;
    }

    /** Whether PTPL can be turned on (RESCAP bit 0): only with somewhere to keep the state. */
    public boolean persistenceSupported() {
        return store != null || shared != null;
    }

    public static boolean validType(int rtype) {
        return rtype >= WRITE_EXCLUSIVE && rtype <= EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
    }

    static boolean allRegistrants(int rtype) {
        return rtype == WRITE_EXCLUSIVE_ALL_REGISTRANTS || rtype == EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
    }

    private static boolean registrantsOnly(int rtype) {
        return rtype == WRITE_EXCLUSIVE_REGISTRANTS_ONLY || rtype == EXCLUSIVE_ACCESS_REGISTRANTS_ONLY;
    }

    // ------------------------------------------------------------------ I/O path

    /**
     * Whether host (hi, lo) may run a command of the read group (Read, Compare) or the write group (Write,
     * Write Zeroes, Dataset Management, Flush) now: {@link NvmeStatus#SUCCESS} or {@link #CONFLICT}. Any thread,
     * no allocation.
     */
    public int checkAccess(long hostHi, long hostLo, boolean write) {
        return access(state, hostHi, hostLo, write);
    }

    private static int access(State s, long hostHi, long hostLo, boolean write) {
        int rtype = s.rtype;
        if (rtype == 0 || (s.holderHi == hostHi && s.holderLo == hostLo)) {
            return NvmeStatus.SUCCESS;
        }
        boolean exclusiveAccess = rtype == EXCLUSIVE_ACCESS || rtype == EXCLUSIVE_ACCESS_REGISTRANTS_ONLY
            || rtype == EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
        if (!write && !exclusiveAccess) {
            return NvmeStatus.SUCCESS; // the Write Exclusive types let everyone read
        }
        if (rtype == WRITE_EXCLUSIVE || rtype == EXCLUSIVE_ACCESS) {
            return CONFLICT; // only the holder
        }
        return s.indexOf(hostHi, hostLo) >= 0 ? NvmeStatus.SUCCESS : CONFLICT; // any registrant
    }

    // ------------------------------------------------------------------ Reservation Register

    /**
     * Reservation Register for host (hi, lo). {@code cptpl} is one of the CPTPL values (the caller refused 01b).
     */
    public int register(long hostHi, long hostLo, int action, boolean iekey, long crkey, long nrkey, int cptpl,
                        List<Notice> notices) {
        return run(notices, () -> registerOnce(hostHi, hostLo, action, iekey, crkey, nrkey, cptpl, notices));
    }

    private int registerOnce(long hostHi, long hostLo, int action, boolean iekey, long crkey, long nrkey, int cptpl,
                             List<Notice> notices) {
        if (cptpl == CPTPL_SET && !persistenceSupported()) {
            return NvmeStatus.INVALID_FIELD;
        }
        Draft d = new Draft(state);
        int me = d.indexOf(hostHi, hostLo);
        switch (action) {
            case REGISTER -> {
                if (me >= 0) {
                    if (d.keys.get(me) != nrkey) {
                        return CONFLICT;
                    }
                    // registered already with this key: nothing changes, the generation stays (nvmet, SPDK)
                    if (cptpl == CPTPL_NO_CHANGE || (cptpl == CPTPL_SET) == d.ptpl) {
                        return NvmeStatus.SUCCESS;
                    }
                    d.ptpl = cptpl == CPTPL_SET;
                    return commit(d);
                }
                d.add(hostHi, hostLo, nrkey);
            }
            case UNREGISTER -> {
                if (me < 0 || (!iekey && d.keys.get(me) != crkey)) {
                    return CONFLICT;
                }
                d.unregister(me, notices);
            }
            case REPLACE -> {
                if (me < 0 || (!iekey && d.keys.get(me) != crkey)) {
                    return CONFLICT;
                }
                d.keys.set(me, nrkey);
            }
            default -> {
                return NvmeStatus.INVALID_FIELD;
            }
        }
        if (cptpl == CPTPL_SET) {
            d.ptpl = true;
        } else if (cptpl == CPTPL_CLEAR) {
            d.ptpl = false;
        }
        d.generation++;
        return commit(d);
    }

    // ------------------------------------------------------------------ Reservation Acquire

    public int acquire(long hostHi, long hostLo, int action, int rtype, long crkey, long prkey,
                       List<Notice> notices) {
        return run(notices, () -> acquireOnce(hostHi, hostLo, action, rtype, crkey, prkey, notices));
    }

    private int acquireOnce(long hostHi, long hostLo, int action, int rtype, long crkey, long prkey,
                            List<Notice> notices) {
        Draft d = new Draft(state);
        int me = d.registrantWithKey(hostHi, hostLo, crkey);
        if (me < 0) {
            return CONFLICT;
        }
        switch (action) {
            case ACQUIRE -> {
                if (d.rtype != 0) {
                    // holding it already with this type is success; anything else conflicts
                    return d.holds(me) && d.rtype == rtype ? NvmeStatus.SUCCESS : CONFLICT;
                }
                d.setHolder(me, rtype);
                return commit(d);
            }
            case PREEMPT, PREEMPT_AND_ABORT -> {
                int status = d.preempt(me, rtype, prkey, notices);
                if (status != NvmeStatus.SUCCESS) {
                    return status;
                }
                d.generation++;
                return commit(d);
            }
            default -> {
                return NvmeStatus.INVALID_FIELD;
            }
        }
    }

    // ------------------------------------------------------------------ Reservation Release

    public int release(long hostHi, long hostLo, int action, int rtype, long crkey, List<Notice> notices) {
        return run(notices, () -> releaseOnce(hostHi, hostLo, action, rtype, crkey, notices));
    }

    private int releaseOnce(long hostHi, long hostLo, int action, int rtype, long crkey, List<Notice> notices) {
        Draft d = new Draft(state);
        int me = d.registrantWithKey(hostHi, hostLo, crkey);
        if (me < 0) {
            return CONFLICT;
        }
        switch (action) {
            case RELEASE -> {
                if (!d.holds(me)) {
                    return NvmeStatus.SUCCESS; // no reservation, or another host's: nothing happens
                }
                if (d.rtype != rtype) {
                    return NvmeStatus.INVALID_FIELD;
                }
                int old = d.rtype;
                d.rtype = 0;
                if (old != WRITE_EXCLUSIVE && old != EXCLUSIVE_ACCESS) {
                    d.noticeToRegistrants(hostHi, hostLo, NOTICE_RESERVATION_RELEASED, notices);
                }
                return commit(d);
            }
            case CLEAR -> {
                d.noticeToRegistrants(hostHi, hostLo, NOTICE_RESERVATION_PREEMPTED, notices);
                d.rtype = 0;
                d.hi.clear();
                d.lo.clear();
                d.keys.clear();
                d.generation++;
                return commit(d);
            }
            default -> {
                return NvmeStatus.INVALID_FIELD;
            }
        }
    }

    // ------------------------------------------------------------------ Reservation Persistence (feature 83h)

    public int setPersistThroughPowerLoss(boolean on) {
        return run(null, () -> {
            if (on && !persistenceSupported()) {
                return NvmeStatus.INVALID_FIELD;
            }
            Draft d = new Draft(state);
            d.ptpl = on;
            return commit(d);
        });
    }

    /**
     * Every path to the namespace went down (no target served it): with PTPL off its registrations and reservation
     * are gone, as after a power loss; with PTPL on they stay. The state starts over at generation 0, as a target's
     * own state does after a restart without PTPL. Returns whether anything was cleared.
     */
    public boolean powerLoss() {
        boolean[] cleared = new boolean[1];
        int status = run(null, () -> {
            State s = state;
            cleared[0] = !s.ptpl && (s.registrants() > 0 || s.rtype != 0);
            return cleared[0] ? commit(new Draft(State.EMPTY)) : NvmeStatus.SUCCESS;
        });
        return status == NvmeStatus.SUCCESS && cleared[0];
    }

    /**
     * Publishes a draft: written first when PTPL is (or was) on, so a failed write changes nothing; a shared
     * state is always written, by compare-and-set against what the command read ({@link #CHANGED_MEANWHILE}
     * when another target wrote in between).
     */
    private int commit(Draft d) {
        State next = d.build();
        State prev = state;
        if (forgotten) {
            return NvmeStatus.INVALID_NAMESPACE; // removed meanwhile: never write its file again
        }
        if (shared != null) {
            List<Notice> notices = commandNotices == null ? List.of() : commandNotices;
            Kept written;
            try {
                written = shared.compareAndSet(kept, next, notices);
            } catch (java.io.IOException e) {
                org.slf4j.LoggerFactory.getLogger(Reservation.class).error(
                    "cannot keep the shared reservation state: {}", e.getMessage());
                return NvmeStatus.INTERNAL_ERROR;
            }
            if (written == null) {
                throw CHANGED_MEANWHILE;
            }
            noticesSeen = written.noticeSeq(); // this target tells its own controllers of these
            kept = written;
            state = next;
            return NvmeStatus.SUCCESS;
        }
        if (store != null && (next.ptpl || prev.ptpl)) {
            try {
                if (next.ptpl) {
                    store.save(next);
                } else {
                    store.delete();
                }
            } catch (java.io.IOException e) {
                org.slf4j.LoggerFactory.getLogger(Reservation.class).error(
                    "cannot keep the reservation state of a namespace with PTPL on: {}", e.toString());
                return NvmeStatus.INTERNAL_ERROR;
            }
        }
        state = next;
        return NvmeStatus.SUCCESS;
    }

    /** Removes the saved state of a namespace that goes away (removed through the API). */
    public synchronized void forget() {
        forgotten = true;
        if (shared != null) {
            shared.close(); // the image keeps the state: the other targets still serve the namespace
            return;
        }
        if (store != null && state.ptpl) {
            try {
                store.delete();
            } catch (java.io.IOException e) {
                org.slf4j.LoggerFactory.getLogger(Reservation.class).warn(
                    "cannot remove the reservation state of a removed namespace: {}", e.toString());
            }
        }
    }

    /** A mutable copy of a state, changed by one command and then published whole. */
    private static final class Draft {
        int rtype;
        long holderHi;
        long holderLo;
        final List<Long> hi = new ArrayList<>();
        final List<Long> lo = new ArrayList<>();
        final List<Long> keys = new ArrayList<>();
        int generation;
        boolean ptpl;

        Draft(State s) {
            rtype = s.rtype;
            holderHi = s.holderHi;
            holderLo = s.holderLo;
            for (int i = 0; i < s.registrants(); i++) {
                add(s.hi[i], s.lo[i], s.keys[i]);
            }
            generation = s.generation;
            ptpl = s.ptpl;
        }

        void add(long h, long l, long key) {
            hi.add(h);
            lo.add(l);
            keys.add(key);
        }

        int indexOf(long h, long l) {
            for (int i = 0; i < hi.size(); i++) {
                if (hi.get(i) == h && lo.get(i) == l) {
                    return i;
                }
            }
            return -1;
        }

        /** Index of host (h, l) when it is registered with key {@code crkey}, else -1 (a Reservation Conflict). */
        int registrantWithKey(long h, long l, long crkey) {
            int i = indexOf(h, l);
            return i >= 0 && keys.get(i) == crkey ? i : -1;
        }

        boolean holds(int i) {
            return rtype != 0 && (allRegistrants(rtype) || (hi.get(i) == holderHi && lo.get(i) == holderLo));
        }

        void setHolder(int i, int type) {
            rtype = type;
            holderHi = hi.get(i);
            holderLo = lo.get(i);
        }

        /**
         * Removes registrant {@code i}. When it held the reservation: for the All Registrants types the
         * reservation stays with the others (the next registrant stands as holder); otherwise it is released,
         * and the other registrants hear so for the Registrants Only types.
         */
        void unregister(int i, List<Notice> notices) {
            long h = hi.get(i);
            long l = lo.get(i);
            boolean held = rtype != 0 && h == holderHi && l == holderLo;
            hi.remove(i);
            lo.remove(i);
            keys.remove(i);
            if (rtype != 0 && allRegistrants(rtype)) {
                if (hi.isEmpty()) {
                    rtype = 0;
                } else if (held) {
                    holderHi = hi.get(0);
                    holderLo = lo.get(0);
                }
            } else if (held) {
                int old = rtype;
                rtype = 0;
                if (registrantsOnly(old)) {
                    noticeToRegistrants(h, l, NOTICE_RESERVATION_RELEASED, notices);
                }
            }
        }

        /** Unregisters every other registrant with key {@code prkey} (itself too when {@code self}); how many. */
        int unregisterByKey(long prkey, int me, boolean self, List<Notice> notices) {
            long meHi = hi.get(me);
            long meLo = lo.get(me);
            int n = 0;
            for (int i = hi.size() - 1; i >= 0; i--) {
                boolean isMe = hi.get(i) == meHi && lo.get(i) == meLo;
                if (keys.get(i) == prkey && (self || !isMe)) {
                    long h = hi.get(i);
                    long l = lo.get(i);
                    unregister(i, notices);
                    n++;
                    if (!isMe) {
                        notices.add(new Notice(h, l, NOTICE_REGISTRATION_PREEMPTED));
                    }
                }
            }
            return n;
        }

        int preempt(int me, int type, long prkey, List<Notice> notices) {
            long meHi = hi.get(me);
            long meLo = lo.get(me);
            if (rtype == 0) {
                return unregisterByKey(prkey, me, true, notices) > 0 ? NvmeStatus.SUCCESS : CONFLICT;
            }
            if (allRegistrants(rtype)) {
                if (prkey == 0) {
                    // every other registrant goes; the preempting host holds the new reservation
                    for (int i = hi.size() - 1; i >= 0; i--) {
                        if (i != indexOf(meHi, meLo)) {
                            notices.add(new Notice(hi.get(i), lo.get(i), NOTICE_REGISTRATION_PREEMPTED));
                            hi.remove(i);
                            lo.remove(i);
                            keys.remove(i);
                        }
                    }
                    setHolder(indexOf(meHi, meLo), type);
                    return NvmeStatus.SUCCESS;
                }
                return unregisterByKey(prkey, me, true, notices) > 0 ? NvmeStatus.SUCCESS : CONFLICT;
            }
            int holder = indexOf(holderHi, holderLo);
            if (holder >= 0 && keys.get(holder) == prkey) {
                // the holder's key (the preempting host's own, to change the type): it holds the new reservation
                int old = rtype;
                setHolder(me, type); // the new holder first, so the preempted host is fenced at once
                unregisterByKey(prkey, me, false, notices);
                setHolder(indexOf(meHi, meLo), type);
                if (old != type) {
                    noticeToRegistrants(meHi, meLo, NOTICE_RESERVATION_RELEASED, notices);
                }
                return NvmeStatus.SUCCESS;
            }
            if (prkey == 0) {
                return NvmeStatus.INVALID_FIELD;
            }
            return unregisterByKey(prkey, me, true, notices) > 0 ? NvmeStatus.SUCCESS : CONFLICT;
        }

        void noticeToRegistrants(long exceptHi, long exceptLo, int type, List<Notice> notices) {
            for (int i = 0; i < hi.size(); i++) {
                if (hi.get(i) != exceptHi || lo.get(i) != exceptLo) {
                    notices.add(new Notice(hi.get(i), lo.get(i), type));
                }
            }
        }

        State build() {
            int n = hi.size();
            long[] h = new long[n];
            long[] l = new long[n];
            long[] k = new long[n];
            for (int i = 0; i < n; i++) {
                h[i] = hi.get(i);
                l[i] = lo.get(i);
                k[i] = keys.get(i);
            }
            return new State(rtype, rtype == 0 ? 0 : holderHi, rtype == 0 ? 0 : holderLo, h, l, k, generation, ptpl);
        }
    }
}
