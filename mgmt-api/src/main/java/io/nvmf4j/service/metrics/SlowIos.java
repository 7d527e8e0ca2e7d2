package io.nvmf4j.service.metrics;

import io.nvmf4j.nvme.Opcodes;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The slowest recent I/O commands: the {@value #CAPACITY} slowest of the current window and of the one before
 * ({@link #windowNanos} each, one minute in the service), so a listing covers one to two windows back.
 *
 * <h2>Cost on the data path</h2>
 * {@link #offer} runs on poll-group threads for every I/O. It reads two volatile fields (the latency a command
 * must reach to enter the current window, and the window's end) and returns: no lock, no allocation. Only a
 * command slower than the current window's {@value #CAPACITY}th slowest (or the first {@value #CAPACITY} of a
 * window, or the first after a window ended) takes the lock and is copied into a preallocated slot; with
 * latencies in no particular order that is about {@code 64 * ln(n / 64)} of a window's {@code n} commands
 * (some 600 of a million).
 */
final class SlowIos {
    /** Slots per window. */
    static final int CAPACITY = 64;
    private static final long NO_LBA = -1;

    private final long windowNanos;
    private Slot[] current = slots();
    private Slot[] previous = slots();
    private int currentSize;
    private int previousSize;
    /** A command must take longer than this to enter the current window (0 while it has free slots). */
    private volatile long threshold;
    /** {@link System#nanoTime()} at which the current window ends. */
    private volatile long windowEnd;

    SlowIos(long windowNanos) {
        this.windowNanos = windowNanos;
        this.windowEnd = System.nanoTime() + windowNanos;
    }

    /** One recorded command; the strings are the controller's own (no copy). */
    private static final class Slot {
        long timeMillis;
        String subsystem;
        int nsid;
        String host;
        int cntlid;
        int qid;
        int opcode;
        long slba;
        int blocks;
        int bytes;
        long latencyNanos;
        int status;

        SlowIo view() {
            boolean lba = slba != NO_LBA;
            return new SlowIo(timeMillis, subsystem, nsid, host, cntlid, qid, opcode, lba ? slba : null,
                lba ? blocks : null, bytes, latencyNanos, status);
        }
    }

    private static Slot[] slots() {
        Slot[] s = new Slot[CAPACITY];
        for (int i = 0; i < CAPACITY; i++) {
            s[i] = new Slot();
        }
        return s;
    }

    /**
     * One completed I/O command (any poll-group thread).
     *
     * @param slba     its starting LBA, with {@code blocks} its block count (kept only for commands that have them)
     * @param nowNanos the {@link System#nanoTime()} its latency ends at
     */
    void offer(String subsystem, int nsid, String host, int cntlid, int qid, int opcode, long slba, int blocks,
               int bytes, long latencyNanos, long nowNanos, int status) {
        if (latencyNanos <= threshold && nowNanos - windowEnd < 0) {
            return;
        }
        synchronized (this) {
            rotate(nowNanos);
            int at;
            if (currentSize < CAPACITY) {
                at = currentSize++;
            } else {
                at = fastest();
                if (current[at].latencyNanos >= latencyNanos) {
                    return;
                }
            }
            Slot s = current[at];
            s.timeMillis = System.currentTimeMillis();
            s.subsystem = subsystem;
            s.nsid = nsid;
            s.host = host;
            s.cntlid = cntlid;
            s.qid = qid;
            s.opcode = opcode;
            boolean hasLba = hasLba(opcode);
            s.slba = hasLba ? slba : NO_LBA;
            s.blocks = hasLba ? blocks : 0;
            s.bytes = bytes;
            s.latencyNanos = latencyNanos;
            s.status = status;
            if (currentSize == CAPACITY) {
                threshold = current[fastest()].latencyNanos;
            }
        }
    }

    /** Commands whose SLBA and NLB (cdw10-12) mean a block range. */
    static boolean hasLba(int opcode) {
        return opcode == Opcodes.IO_READ || opcode == Opcodes.IO_WRITE || opcode == Opcodes.IO_COMPARE
            || opcode == Opcodes.IO_WRITE_ZEROES;
    }

    /** Index of the fastest command of the full current window. */
    private int fastest() {
        int min = 0;
        for (int i = 1; i < currentSize; i++) {
            if (current[i].latencyNanos < current[min].latencyNanos) {
                min = i;
            }
        }
        return min;
    }

    /** Moves to a new window when the current one ended (the previous one is dropped if it ended too). */
    private void rotate(long nowNanos) {
        if (nowNanos - windowEnd < 0) {
            return;
        }
        if (nowNanos - windowEnd < windowNanos) {
            Slot[] t = previous;
            previous = current;
            previousSize = currentSize;
            current = t;
        } else {
            previousSize = 0;
        }
        for (int i = 0; i < currentSize; i++) {
            current[i].subsystem = null;
            current[i].host = null;
        }
        currentSize = 0;
        threshold = 0;
        windowEnd = nowNanos + windowNanos;
    }

    /** The slowest commands of both windows, slowest first, at most {@code limit}. */
    synchronized List<SlowIo> slowest(int limit) {
        rotate(System.nanoTime());
        List<SlowIo> out = new ArrayList<>(currentSize + previousSize);
        for (int i = 0; i < currentSize; i++) {
            out.add(current[i].view());
        }
        for (int i = 0; i < previousSize; i++) {
            out.add(previous[i].view());
        }
        out.sort(Comparator.comparingLong(SlowIo::latencyNanos).reversed());
        return out.size() > limit ? List.copyOf(out.subList(0, limit)) : out;
    }
}
