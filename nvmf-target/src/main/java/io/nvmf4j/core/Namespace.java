package io.nvmf4j.core;

import io.nvmf4j.bdev.BlockDevice;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A namespace: nsid, the block device behind it, its identifiers and its I/O counters.
 *
 * <p>In-flight work: every command that reaches the device holds the namespace from its execution to its
 * completion ({@link #tryAcquire} / {@link #release}, poll-group threads, allocation-free). Once removed
 * ({@link #markRemoved}) no new command gets in, long commands stop at their next step, and the control
 * plane closes the device only after {@link #awaitIdle} saw the count at zero: a device is never freed
 * under work that runs on it.
 *
 * <p>Fences: the count is kept in two halves, and each command remembers which half it was counted in (the
 * current {@link #epoch}). {@link #fence} switches the epoch and calls back once the old half is empty: every
 * command that was already past its reservation check when the fence began has then completed, and every later
 * command saw the state published before the fence (Preempt and Abort, as nvmet waits for the preempted hosts'
 * commands; and a change of a shared reservation made through another target that takes access away, before this
 * target acknowledges it). Fences that come while one drains are batched into the next switch.
 *
 * <p>Write holds: while {@link #holdWrites} is on, a command that changes the medium parks itself
 * ({@link #park}) after giving its count back instead of reaching the device, so a fence then waits only for the
 * commands already on the device; {@link #resumeWrites} hands the parked ones back to their poll groups. A snapshot
 * of a volume in use is taken between the two (crash-consistent: no write is half in it).
 */
public final class Namespace implements io.nvmf4j.engine.IoNamespace {
    private final int nsid;
    private final BlockDevice bdev;
    private final byte[] nguid;
    private final byte[] uuid;
    private final byte[] eui64;

    public final LongAdder readCommands = new LongAdder();
    public final LongAdder writeCommands = new LongAdder();
    public final LongAdder bytesRead = new LongAdder();
    public final LongAdder bytesWritten = new LongAdder();
    /** QoS: commands held back (each time one waits), their total wait, and how many wait now. */
    public final LongAdder qosDelayed = new LongAdder();
    public final LongAdder qosDelayNanos = new LongAdder();
    public final LongAdder qosWaiting = new LongAdder();
    /** The QoS limiters of this namespace's I/O, or null: none; replaced as a whole, read lock-free. */
    private volatile io.nvmf4j.qos.NamespaceQos qos;

    /** Commands executing on the device now, by epoch half (incremented before {@link #removed} is read). */
    private final LongAdder[] inFlight = {new LongAdder(), new LongAdder()};
    /** Reservation changes under way off the poll groups (see {@link #holdForChange}). */
    private final LongAdder changes = new LongAdder();
    /** The half new commands are counted in (0 or 1); switched by {@link #fence}. */
    private volatile int epoch;
    /** Fences waiting for the old half to empty, and those that came meanwhile (for the next switch). */
    private List<Fence> draining;
    private List<Fence> nextFences;
    private volatile boolean removed;
    /** Set by {@link #holdWrites}: commands that change the medium park instead of running. */
    private volatile boolean writesHeld;
    /** The parked commands' continuations (only while held; guarded by this). */
    private List<Runnable> parked;
    /** The hosts that see it, or null: every host (per-host masking); replaced as a whole, read lock-free. */
    private volatile String[] hosts;
    /** Its persistent reservation; set before the namespace is published (none kept: a fresh, unsaved one). */
    private Reservation reservation = new Reservation(null, null);
    /** Its ANA group (ANAGRPID); set before the namespace is published. */
    /** Set by the control plane while the namespace serves: the poll groups read it for each command. */
    private volatile int anaGroup = 1;
    /** Whether it has reservations (RESCAP, the reservation commands); set before the namespace is published. */
    private boolean reservationsOn = true;

    /**
     * @param nguid 16 bytes
     * @param uuid  16 bytes
     * @param eui64 8 bytes or null
     */
    public Namespace(int nsid, BlockDevice bdev, byte[] nguid, byte[] uuid, byte[] eui64) {
        this.nsid = nsid;
        this.bdev = bdev;
        this.nguid = nguid.clone();
        this.uuid = uuid.clone();
        this.eui64 = eui64 == null ? null : eui64.clone();
    }

    /** Masks the namespace to {@code hostnqns} (null: visible to every host). */
    public void setHosts(java.util.Collection<String> hostnqns) {
        hosts = hostnqns == null ? null : hostnqns.toArray(String[]::new);
    }

    /** Whether the host with this NQN sees the namespace (active for it); allocation-free, any thread. */
    public boolean visibleTo(String hostnqn) {
        String[] h = hosts;
        if (h == null) {
            return true;
        }
        for (String x : h) {
            if (x.equals(hostnqn)) {
                return true;
            }
        }
        return false;
    }

    /** The QoS its I/O falls under, or null. */
    public io.nvmf4j.qos.NamespaceQos qos() {
        return qos;
    }

    /** Installs the QoS its I/O falls under from now (null: none); commands waiting take their budget again. */
    public void qos(io.nvmf4j.qos.NamespaceQos qos) {
        this.qos = qos;
    }

    @Override
    public int nsid() {
        return nsid;
    }

    /** The ANA group it belongs to (1..{@link io.nvmf4j.nvme.AnaLog#GROUPS_MAX}). */
    public int anaGroup() {
        return anaGroup;
    }

    /** Puts the namespace in ANA group {@code group} (its next command and ANA log page see it there). */
    public void anaGroup(int group) {
        this.anaGroup = group;
    }

    public Reservation reservation() {
        return reservation;
    }

    /**
     * Whether the namespace has reservations: false when no state is shared with the other instances that export
     * it (NamespaceConfig#reservations off): Identify leaves RESCAP 0 and the reservation commands are Invalid Opcode.
     */
    public boolean reservationsOn() {
        return reservationsOn;
    }

    /** Turns the namespace's reservations off (or on); before it is added anywhere. */
    public void reservationsOn(boolean on) {
        this.reservationsOn = on;
    }

    /**
     * Gives the namespace its reservation (with the state restored at start); before it is added anywhere. A change
     * another target makes to a shared reservation that takes access away drains this namespace's commands
     * ({@link #fence}, polled on {@link #REMOTE_FENCES}) before this target acknowledges it.
     */
    public void reservation(Reservation r) {
        this.reservation = r;
        r.drainWith(done -> fence(REMOTE_FENCES, done));
    }

    /** Where the fences for other targets' reservation changes poll (no poll group runs them). */
    private static final ScheduledExecutorService REMOTE_FENCES =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nvmf4j-reservation-fence");
            t.setDaemon(true);
            return t;
        });

    @Override
    public long durabilityErrors() {
        return bdev().durabilityErrors();
    }

    @Override
    public long qosDelayed() {
        return qosDelayed.sum();
    }

    @Override
    public long qosDelayNanos() {
        return qosDelayNanos.sum();
    }

    @Override
    public long qosWaiting() {
        return qosWaiting.sum();
    }

    public BlockDevice bdev() {
        return bdev;
    }

    public int blockSize() {
        return bdev.blockSize();
    }

    public long numBlocks() {
        return bdev.numBlocks();
    }

    public byte[] nguid() {
        return nguid.clone();
    }

    public byte[] uuid() {
        return uuid.clone();
    }

    /** 8 bytes, or null when none was configured. */
    public byte[] eui64() {
        return eui64 == null ? null : eui64.clone();
    }

    /**
     * Counts one command in before it touches the device: the epoch half it is counted in (give it back to
     * {@link #release}), or -1 (nothing counted) once the namespace is removed. The increment comes before the read
     * of the flag and {@link #markRemoved} writes the flag before it reads the count, so either the command sees
     * the removal or the removal sees the command; the same order makes a fence see the command or the command
     * see the state the fence's caller published.
     */
    public int tryAcquire() {
        int half = epoch;
        inFlight[half].increment();
        if (removed) {
            inFlight[half].decrement();
            return -1;
        }
        return half;
    }

    /** Counts a command out (it completed, or stopped); exactly once per successful {@link #tryAcquire}. */
    public void release(int half) {
        inFlight[half].decrement();
    }

    /**
     * Calls {@code done} on {@code executor} once every command counted in before this call has completed (see the
     * class comment). The caller must not itself hold a count. Polls the old half every 100 us on {@code executor}
     * (a poll-group thread: never blocks it); a refused executor (its poll group stopped) drops the callback.
     */
    public void fence(ScheduledExecutorService executor, Runnable done) {
        Fence f = new Fence(executor, done);
        synchronized (this) {
            if (draining != null) {
                if (nextFences == null) {
                    nextFences = new ArrayList<>();
                }
                nextFences.add(f);
                return;
            }
            draining = new ArrayList<>(List.of(f));
        }
        switchEpoch(executor);
    }

    private void switchEpoch(ScheduledExecutorService executor) {
        int old = epoch;
        epoch = old ^ 1;
        new Drain(old, executor, System.nanoTime()).run();
    }

    private record Fence(ScheduledExecutorService executor, Runnable done) {
    }

    /** Polls one old half until it is empty, then calls its fences back and starts the next switch, if any. */
    private final class Drain implements Runnable {
        private static final long POLL_NANOS = 100_000;
        private static final long WARN_NANOS = TimeUnit.SECONDS.toNanos(10);
        private final int half;
        private final ScheduledExecutorService executor;
        private final long start;
        private boolean warned;

        Drain(int half, ScheduledExecutorService executor, long start) {
            this.half = half;
            this.executor = executor;
            this.start = start;
        }

        @Override
        public void run() {
            if (inFlight[half].sum() != 0) {
                if (!warned && System.nanoTime() - start > WARN_NANOS) {
                    warned = true;
                    org.slf4j.LoggerFactory.getLogger(Namespace.class).warn("namespace {}: a reservation preempt "
                        + "has waited 10 s for {} command(s) of the device to complete", nsid, inFlight[half].sum());
                }
                try {
                    executor.schedule(this, POLL_NANOS, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    finish(); // this poll group stopped; hand the fences on rather than lose them
                }
                return;
            }
            finish();
        }

        private void finish() {
            List<Fence> done;
            List<Fence> next;
            synchronized (Namespace.this) {
                done = draining;
                next = nextFences;
                nextFences = null;
                draining = next;
            }
            for (Fence f : done) {
                try {
                    f.executor().execute(f.done());
                } catch (RejectedExecutionException e) {
                    // that queue's poll group stopped: its command is gone with it
                }
            }
            if (next != null) {
                switchEpoch(next.get(0).executor());
            }
        }
    }

    /**
     * Whether commands that change the medium must {@link #park} now. Read by the poll groups after the command's
     * count was taken, so that a fence started after {@link #holdWrites} either waits for the command or the
     * command sees the hold.
     */
    public boolean writesHeld() {
        return writesHeld;
    }

    /**
     * Parks a command that changes the medium (its count already given back) until {@link #resumeWrites}, which runs
     * {@code resume} on its poll group; false when the hold ended meanwhile (then run it now).
     */
    public synchronized boolean park(Runnable resume) {
        if (!writesHeld) {
            return false;
        }
        parked.add(resume);
        return true;
    }

    /** From now on commands that change the medium park; follow with a {@link #fence} to drain the running ones. */
    public synchronized void holdWrites() {
        if (!writesHeld) {
            parked = new ArrayList<>();
            writesHeld = true;
        }
    }

    /** Ends the hold: returns the parked commands' continuations, in arrival order, for the caller to run. */
    public synchronized List<Runnable> resumeWrites() {
        writesHeld = false;
        List<Runnable> out = parked == null ? List.of() : parked;
        parked = null;
        return out;
    }

    /** From now on no command gets in, and long commands stop at their next step. */
    public void markRemoved() {
        removed = true;
    }

    public boolean isRemoved() {
        return removed;
    }

    /** Commands on the device now, and reservation changes under way ({@link #holdForChange}). */
    public long inFlight() {
        return inFlight[0].sum() + inFlight[1].sum() + changes.sum();
    }

    /**
     * Moves a reservation command's count (taken by {@link #tryAcquire} in {@code half}) to a hold that the removal
     * waits for ({@link #awaitIdle}) but no {@link #fence} does: the command does not touch the device, and a change
     * that waits for another target's acknowledgement must not hold up this target's drain for that target's own
     * change (each would wait for the other). Give it back with {@link #releaseChange}.
     */
    public void holdForChange(int half) {
        changes.increment();
        if (half >= 0) {
            release(half);
        }
    }

    /** Ends a hold of {@link #holdForChange}. */
    public void releaseChange() {
        changes.decrement();
    }

    /**
     * Waits (control-plane thread) until no command of this removed namespace runs; false when some still did
     * after {@code timeoutMillis}. The caller must then not close the device.
     */
    public boolean awaitIdle(long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (inFlight() != 0) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return inFlight() == 0;
            }
        }
        return true;
    }
}
