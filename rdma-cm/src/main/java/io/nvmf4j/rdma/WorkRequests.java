package io.nvmf4j.rdma;

/**
 * Preallocated work requests with their scatter/gather entries: {@code capacity} WR structs
 * followed by {@code capacity * maxSge} {@code ibv_sge}s, each WR's {@code sg_list} wired to its
 * own SGEs by the library. Java fills entries in place; a post call chains entries
 * {@code [first, first + count)} and hands them to the provider in one call, so the same
 * entries can be filled and reposted forever without allocation.
 */
public abstract class WorkRequests extends NativeArray {
    static final int SGE_SIZE = Layout.intValue("sge.size");
    static final int SGE_ADDR = Layout.intValue("sge.addr");
    static final int SGE_LENGTH = Layout.intValue("sge.length");
    static final int SGE_LKEY = Layout.intValue("sge.lkey");

    final int maxSge;
    private final int wrSize;
    private final int sgeBase;

    WorkRequests(String kind, int capacity, int maxSge, int wrSize) {
        super(kind, capacity, maxSge);
        this.maxSge = maxSge;
        this.wrSize = wrSize;
        this.sgeBase = HEADER + capacity * wrSize;
    }

    /** Scatter/gather entries per work request. */
    public final int maxSge() {
        return maxSge;
    }

    final int wr(int index) {
        return HEADER + index * wrSize;
    }

    final int sge(int index, int sge) {
        if (sge >= maxSge) {
            throw new IndexOutOfBoundsException("sge " + sge + " of " + maxSge);
        }
        return sgeBase + (index * maxSge + sge) * SGE_SIZE;
    }

    /** Sets SGE {@code sge} of entry {@code index}: local address, length and lkey. */
    public final void setSge(int index, int sge, long addr, int length, int lkey) {
        int at = sge(index, sge);
        buffer.putLong(at + SGE_ADDR, addr);
        buffer.putInt(at + SGE_LENGTH, length);
        buffer.putInt(at + SGE_LKEY, lkey);
    }

    public final long sgeAddress(int index, int sge) {
        return buffer.getLong(sge(index, sge) + SGE_ADDR);
    }

    public final int sgeLength(int index, int sge) {
        return buffer.getInt(sge(index, sge) + SGE_LENGTH);
    }

    public final int sgeLkey(int index, int sge) {
        return buffer.getInt(sge(index, sge) + SGE_LKEY);
    }
}
