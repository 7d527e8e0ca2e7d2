package io.nvmf4j.core;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The Reservation Notification log (page 80h) of one controller and its Reservation Notification Mask
 * (feature 82h, per namespace). A notice is queued by the thread of the command that caused it (so a read of
 * the page after that command completed finds it); the page is read on the admin thread.
 *
 * <p>Each read of the page takes the oldest notification off the queue. The queue holds
 * {@link #CAPACITY} pages; past that a notification is lost, and the Log Page Count of the next page
 * read shows the gap (the count of a page is the one it would have had).
 */
public final class ReservationNotices {
    public static final int LID = 0x80;
    public static final int PAGE_SIZE = 64;
    /** AEN: I/O command set specific (6h), Reservation Log Page Available (00h), log page 80h. */
    public static final int AEN_RESERVATION_LOG = 0x6 | (0x00 << 8) | (LID << 16);
    /** Mask bits: REGPRE (1), RESREL (2), RESPRE (3); the others are reserved. */
    public static final int MASK_VALID = 0xE;
    static final int CAPACITY = 64;

    private final ArrayDeque<long[]> pages = new ArrayDeque<>();
    private final Map<Integer, Integer> masks = new HashMap<>();
    private long counter;

    /** Queues a notice unless its type is masked for the namespace; true when one was queued. */
    synchronized boolean add(int type, int nsid) {
        if ((mask(nsid) & (1 << type)) != 0) {
            return false;
        }
        counter = counter == -1L ? 1 : counter + 1; // wraps to 1: 0 means an empty page
        if (pages.size() == CAPACITY) {
            pages.poll(); // the oldest goes; the next page's count shows the gap
        }
        pages.add(new long[] {counter, type, nsid});
        return true;
    }

    public synchronized int mask(int nsid) {
        return masks.getOrDefault(nsid, 0);
    }

    public synchronized void setMask(int nsid, int mask) {
        masks.put(nsid, mask);
    }

    /** Pages waiting to be read. */
    public synchronized int available() {
        return pages.size();
    }

    /**
     * Takes the oldest page: {count, type, nsid} and how many remain after it, or an empty page (all zero)
     * when none waits.
     */
    public synchronized long[] take() {
        long[] p = pages.poll();
        if (p == null) {
            return new long[] {0, 0, 0, 0};
        }
        return new long[] {p[0], p[1], p[2], Math.min(pages.size(), 255)};
    }
}
