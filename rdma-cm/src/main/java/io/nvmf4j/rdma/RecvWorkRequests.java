package io.nvmf4j.rdma;

/** Preallocated {@code ibv_recv_wr}s for {@link Verbs#postSrqRecv} and {@link Verbs#postRecv}. */
public final class RecvWorkRequests extends WorkRequests {
    private static final int SIZE = Layout.intValue("recv_wr.size");
    private static final int WR_ID = Layout.intValue("recv_wr.wr_id");
    private static final int NUM_SGE = Layout.intValue("recv_wr.num_sge");

    public RecvWorkRequests(int capacity, int maxSge) {
        super("recv_wr", capacity, maxSge, SIZE);
    }

    public void setWrId(int index, long wrId) {
        buffer.putLong(wr(index) + WR_ID, wrId);
    }

    public void setNumSge(int index, int numSge) {
        if (numSge < 0 || numSge > maxSge) {
            throw new IndexOutOfBoundsException("numSge " + numSge + " of " + maxSge);
        }
        buffer.putInt(wr(index) + NUM_SGE, numSge);
    }

    /** A receive into one local buffer. */
    public void set(int index, long wrId, long addr, int length, int lkey) {
        int at = wr(index);
        buffer.putLong(at + WR_ID, wrId);
        buffer.putInt(at + NUM_SGE, 1);
        setSge(index, 0, addr, length, lkey);
    }

    public long wrId(int index) {
        return buffer.getLong(wr(index) + WR_ID);
    }

    public int numSge(int index) {
        return buffer.getInt(wr(index) + NUM_SGE);
    }
}
