package io.nvmf4j.rdma;

/**
 * A preallocated {@code ibv_wc} array that {@link Verbs#pollCq} fills in place; read entry
 * {@code [0, n)} after a poll that returned {@code n}.
 */
public final class Completions extends NativeArray {
    private static final int SIZE = Layout.intValue("wc.size");
    private static final int WR_ID = Layout.intValue("wc.wr_id");
    private static final int STATUS = Layout.intValue("wc.status");
    private static final int OPCODE = Layout.intValue("wc.opcode");
    private static final int VENDOR_ERR = Layout.intValue("wc.vendor_err");
    private static final int BYTE_LEN = Layout.intValue("wc.byte_len");
    private static final int IMM_DATA = Layout.intValue("wc.imm_data");
    private static final int INVALIDATED_RKEY = Layout.intValue("wc.invalidated_rkey");
    private static final int QP_NUM = Layout.intValue("wc.qp_num");
    private static final int SRC_QP = Layout.intValue("wc.src_qp");
    private static final int WC_FLAGS = Layout.intValue("wc.wc_flags");

    public Completions(int capacity) {
        super("wc", capacity, 0);
    }

    private int at(int index) {
        return HEADER + index * SIZE;
    }

    public long wrId(int index) {
        return buffer.getLong(at(index) + WR_ID);
    }

    /** {@link Verbs#WC_SUCCESS}, {@link Verbs#WC_WR_FLUSH_ERR}, ...; see {@link Verbs#wcStatusName}. */
    public int status(int index) {
        return buffer.getInt(at(index) + STATUS);
    }

    public boolean isSuccess(int index) {
        return status(index) == Verbs.WC_SUCCESS;
    }

    /** {@link Verbs#WC_SEND}, {@link Verbs#WC_RECV}, ... (undefined for a failed completion). */
    public int opcode(int index) {
        return buffer.getInt(at(index) + OPCODE);
    }

    public int vendorErr(int index) {
        return buffer.getInt(at(index) + VENDOR_ERR);
    }

    /** Bytes received (receives) or read (RDMA READ). */
    public int byteLen(int index) {
        return buffer.getInt(at(index) + BYTE_LEN);
    }

    /** Immediate data in network byte order, valid when {@link #wcFlags} has {@link Verbs#WC_WITH_IMM}. */
    public int immData(int index) {
        return buffer.getInt(at(index) + IMM_DATA);
    }

    /** The rkey the peer invalidated, valid when {@link #wcFlags} has {@link Verbs#WC_WITH_INV}. */
    public int invalidatedRkey(int index) {
        return buffer.getInt(at(index) + INVALIDATED_RKEY);
    }

    public int qpNum(int index) {
        return buffer.getInt(at(index) + QP_NUM);
    }

    public int srcQp(int index) {
        return buffer.getInt(at(index) + SRC_QP);
    }

    public int wcFlags(int index) {
        return buffer.getInt(at(index) + WC_FLAGS);
    }
}
