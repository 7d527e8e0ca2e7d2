package io.nvmf4j.rdma;

/**
 * Preallocated {@code ibv_send_wr}s for {@link Verbs#postSend}: SEND, SEND_WITH_INV, RDMA_WRITE
 * and RDMA_READ (and the _WITH_IMM forms), signalled or not, inline or not. Each setter writes
 * one field of entry {@code index} in place.
 */
public final class SendWorkRequests extends WorkRequests {
    private static final int SIZE = Layout.intValue("send_wr.size");
    private static final int WR_ID = Layout.intValue("send_wr.wr_id");
    private static final int NUM_SGE = Layout.intValue("send_wr.num_sge");
    private static final int OPCODE = Layout.intValue("send_wr.opcode");
    private static final int SEND_FLAGS = Layout.intValue("send_wr.send_flags");
    private static final int IMM_DATA = Layout.intValue("send_wr.imm_data");
    private static final int INVALIDATE_RKEY = Layout.intValue("send_wr.invalidate_rkey");
    private static final int REMOTE_ADDR = Layout.intValue("send_wr.wr.rdma.remote_addr");
    private static final int RKEY = Layout.intValue("send_wr.wr.rdma.rkey");

    public SendWorkRequests(int capacity, int maxSge) {
        super("send_wr", capacity, maxSge, SIZE);
    }

    public void setWrId(int index, long wrId) {
        buffer.putLong(wr(index) + WR_ID, wrId);
    }

    /** One of {@link Verbs#WR_SEND}, {@link Verbs#WR_SEND_WITH_INV}, {@link Verbs#WR_RDMA_WRITE}, ... */
    public void setOpcode(int index, int opcode) {
        buffer.putInt(wr(index) + OPCODE, opcode);
    }

    /** {@link Verbs#SEND_SIGNALED}, {@link Verbs#SEND_INLINE}, {@link Verbs#SEND_SOLICITED}, {@link Verbs#SEND_FENCE}. */
    public void setFlags(int index, int flags) {
        buffer.putInt(wr(index) + SEND_FLAGS, flags);
    }

    public void setNumSge(int index, int numSge) {
        if (numSge < 0 || numSge > maxSge) {
            throw new IndexOutOfBoundsException("numSge " + numSge + " of " + maxSge);
        }
        buffer.putInt(wr(index) + NUM_SGE, numSge);
    }

    /** The rkey a SEND_WITH_INV asks the peer to invalidate. */
    public void setInvalidateRkey(int index, int rkey) {
        buffer.putInt(wr(index) + INVALIDATE_RKEY, rkey);
    }

    /** Immediate data for the _WITH_IMM opcodes, already in network byte order. */
    public void setImmData(int index, int immData) {
        buffer.putInt(wr(index) + IMM_DATA, immData);
    }

    /** Remote address and rkey of an RDMA READ or WRITE. */
    public void setRemote(int index, long remoteAddr, int rkey) {
        int at = wr(index);
        buffer.putLong(at + REMOTE_ADDR, remoteAddr);
        buffer.putInt(at + RKEY, rkey);
    }

    /** A SEND of one local buffer. */
    public void setSend(int index, long wrId, long addr, int length, int lkey, int flags) {
        setOne(index, wrId, Verbs.WR_SEND, addr, length, lkey, flags);
    }

    /** A SEND of one local buffer that also invalidates {@code invalidateRkey} at the peer. */
    public void setSendWithInvalidate(int index, long wrId, long addr, int length, int lkey, int invalidateRkey,
            int flags) {
        setOne(index, wrId, Verbs.WR_SEND_WITH_INV, addr, length, lkey, flags);
        setInvalidateRkey(index, invalidateRkey);
    }

    /** An RDMA WRITE of one local buffer to the peer's {@code remoteAddr}/{@code rkey}. */
    public void setRdmaWrite(int index, long wrId, long addr, int length, int lkey, long remoteAddr, int rkey,
            int flags) {
        setOne(index, wrId, Verbs.WR_RDMA_WRITE, addr, length, lkey, flags);
        setRemote(index, remoteAddr, rkey);
    }

    /** An RDMA READ of the peer's {@code remoteAddr}/{@code rkey} into one local buffer. */
    public void setRdmaRead(int index, long wrId, long addr, int length, int lkey, long remoteAddr, int rkey,
            int flags) {
        setOne(index, wrId, Verbs.WR_RDMA_READ, addr, length, lkey, flags);
        setRemote(index, remoteAddr, rkey);
    }

    private void setOne(int index, long wrId, int opcode, long addr, int length, int lkey, int flags) {
        int at = wr(index);
        buffer.putLong(at + WR_ID, wrId);
        buffer.putInt(at + OPCODE, opcode);
        buffer.putInt(at + SEND_FLAGS, flags);
        buffer.putInt(at + NUM_SGE, 1);
        setSge(index, 0, addr, length, lkey);
    }

    public long wrId(int index) {
        return buffer.getLong(wr(index) + WR_ID);
    }

    public int opcode(int index) {
        return buffer.getInt(wr(index) + OPCODE);
    }

    public int flags(int index) {
        return buffer.getInt(wr(index) + SEND_FLAGS);
    }

    public int numSge(int index) {
        return buffer.getInt(wr(index) + NUM_SGE);
    }

    public int invalidateRkey(int index) {
        return buffer.getInt(wr(index) + INVALIDATE_RKEY);
    }

    public long remoteAddr(int index) {
        return buffer.getLong(wr(index) + REMOTE_ADDR);
    }

    public int rkey(int index) {
        return buffer.getInt(wr(index) + RKEY);
    }
}
