package io.nvmf4j.core;

import io.nvmf4j.bdev.BlockDevice;

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
 */
public final class Namespace {
    private final int nsid;
    private final BlockDevice bdev;
    private final byte[] nguid;
    private final byte[] uuid;
    private final byte[] eui64;

    public final LongAdder readCommands = new LongAdder();
    public final LongAdder writeCommands = new LongAdder();
    public final LongAdder bytesRead = new LongAdder();
    public final LongAdder bytesWritten = new LongAdder();

    /** Commands executing on the device now (incremented before {@link #removed} is read, see tryAcquire). */
    private final LongAdder inFlight = new LongAdder();
    private volatile boolean removed;
    /** The hosts that see it, or null: every host (per-host masking); replaced as a whole, read lock-free. */
    private volatile String[] hosts;
    /** Its persistent reservation; set before the namespace is published (none kept: a fresh, unsaved one). */
    private Reservation reservation = new Reservation(null, null);
    /** Its ANA group (ANAGRPID); set before the namespace is published. */
    private int anaGroup = 1;

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

    public int nsid() {
        return nsid;
    }

    /** The ANA group it belongs to (1..{@link io.nvmf4j.nvme.AnaLog#GROUPS_MAX}). */
    public int anaGroup() {
        return anaGroup;
    }

    /** Puts the namespace in ANA group {@code group}; before it is added anywhere. */
    public void anaGroup(int group) {
        this.anaGroup = group;
    }

    public Reservation reservation() {
        return reservation;
    }

    /** Gives the namespace its reservation (with the state restored at start); before it is added anywhere. */
    public void reservation(Reservation r) {
        this.reservation = r;
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
     * Counts one command in before it touches the device; false (and nothing counted) once the namespace is
     * removed. The increment comes before the read of the flag and {@link #markRemoved} writes the flag before
     * it reads the count, so either the command sees the removal or the removal sees the command.
     */
    public boolean tryAcquire() {
        inFlight.increment();
        if (removed) {
            inFlight.decrement();
            return false;
        }
        return true;
    }

    /** Counts a command out (it completed, or stopped); exactly once per successful {@link #tryAcquire}. */
    public void release() {
        inFlight.decrement();
    }

    /** From now on no command gets in, and long commands stop at their next step. */
    public void markRemoved() {
        removed = true;
    }

    public boolean isRemoved() {
        return removed;
    }

    /** Commands on the device now. */
    public long inFlight() {
        return inFlight.sum();
    }

    /**
     * Waits (control-plane thread) until no command of this removed namespace runs; false when some still did
     * after {@code timeoutMillis}. The caller must then not close the device.
     */
    public boolean awaitIdle(long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (inFlight.sum() != 0) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return inFlight.sum() == 0;
            }
        }
        return true;
    }
}
