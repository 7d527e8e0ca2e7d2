package io.nvmf4j.rdma;

/** {@code struct ibv_device_attr}: the limits and capabilities a transport sizes itself by. */
public final class DeviceAttributes {
    private static final long CAP_MEM_MGT_EXTENSIONS = Layout.value("device.cap.MEM_MGT_EXTENSIONS");
    private static final long CAP_MEM_WINDOW = Layout.value("device.cap.MEM_WINDOW");
    private static final long CAP_MEM_WINDOW_2A = Layout.value("device.cap.MEM_WINDOW_TYPE_2A");
    private static final long CAP_MEM_WINDOW_2B = Layout.value("device.cap.MEM_WINDOW_TYPE_2B");
    private static final long CAP_SRQ_RESIZE = Layout.value("device.cap.SRQ_RESIZE");
    private static final long CAP_RC_RNR_NAK_GEN = Layout.value("device.cap.RC_RNR_NAK_GEN");

    // indices into the attribute array, resolved once: the getters are plain array reads (no lookup,
    // no allocation; supportsSendWithInvalidate is asked per response)
    private static final int I_MAX_QP = Layout.intValue("device.max_qp");
    private static final int I_MAX_QP_WR = Layout.intValue("device.max_qp_wr");
    private static final int I_MAX_QP_RD_ATOM = Layout.intValue("device.max_qp_rd_atom");
    private static final int I_MAX_QP_INIT_RD_ATOM = Layout.intValue("device.max_qp_init_rd_atom");
    private static final int I_MAX_SGE = Layout.intValue("device.max_sge");
    private static final int I_MAX_SGE_RD = Layout.intValue("device.max_sge_rd");
    private static final int I_MAX_CQ = Layout.intValue("device.max_cq");
    private static final int I_MAX_CQE = Layout.intValue("device.max_cqe");
    private static final int I_MAX_MR = Layout.intValue("device.max_mr");
    private static final int I_MAX_MR_SIZE = Layout.intValue("device.max_mr_size");
    private static final int I_MAX_MW = Layout.intValue("device.max_mw");
    private static final int I_MAX_SRQ = Layout.intValue("device.max_srq");
    private static final int I_MAX_SRQ_WR = Layout.intValue("device.max_srq_wr");
    private static final int I_MAX_SRQ_SGE = Layout.intValue("device.max_srq_sge");
    private static final int I_PHYS_PORT_CNT = Layout.intValue("device.phys_port_cnt");
    private static final int I_VENDOR_ID = Layout.intValue("device.vendor_id");
    private static final int I_VENDOR_PART_ID = Layout.intValue("device.vendor_part_id");
    private static final int I_DEVICE_CAP_FLAGS = Layout.intValue("device.device_cap_flags");

    private final long[] values;

    DeviceAttributes(long[] values) {
        this.values = values.clone();
    }

    public int maxQp() {
        return (int) values[I_MAX_QP];
    }

    /** Work requests per send or receive queue. */
    public int maxQpWr() {
        return (int) values[I_MAX_QP_WR];
    }

    /** RDMA READs a QP can have outstanding as responder (the host's IRD toward us). */
    public int maxQpRdAtom() {
        return (int) values[I_MAX_QP_RD_ATOM];
    }

    /** RDMA READs a QP can have outstanding as initiator (our read depth). */
    public int maxQpInitRdAtom() {
        return (int) values[I_MAX_QP_INIT_RD_ATOM];
    }

    public int maxSge() {
        return (int) values[I_MAX_SGE];
    }

    public int maxSgeRd() {
        return (int) values[I_MAX_SGE_RD];
    }

    public int maxCq() {
        return (int) values[I_MAX_CQ];
    }

    public int maxCqe() {
        return (int) values[I_MAX_CQE];
    }

    public int maxMr() {
        return (int) values[I_MAX_MR];
    }

    /** Unsigned (UINT64_MAX, i.e. -1, on soft-RoCE). */
    public long maxMrSize() {
        return values[I_MAX_MR_SIZE];
    }

    public int maxMw() {
        return (int) values[I_MAX_MW];
    }

    public int maxSrq() {
        return (int) values[I_MAX_SRQ];
    }

    public int maxSrqWr() {
        return (int) values[I_MAX_SRQ_WR];
    }

    public int maxSrqSge() {
        return (int) values[I_MAX_SRQ_SGE];
    }

    public int physPortCnt() {
        return (int) values[I_PHYS_PORT_CNT];
    }

    public int vendorId() {
        return (int) values[I_VENDOR_ID];
    }

    public int vendorPartId() {
        return (int) values[I_VENDOR_PART_ID];
    }

    /** {@code device_cap_flags} as reported (IBV_DEVICE_* bits). */
    public long deviceCapFlags() {
        return values[I_DEVICE_CAP_FLAGS];
    }

    /**
     * IBV_DEVICE_MEM_MGT_EXTENSIONS: fast registration, local invalidate and send with
     * invalidate. Without it, answer with a plain SEND.
     */
    public boolean supportsSendWithInvalidate() {
        return (deviceCapFlags() & CAP_MEM_MGT_EXTENSIONS) != 0;
    }

    /** Any kind of memory window (type 1, 2A or 2B). */
    public boolean supportsMemoryWindows() {
        return (deviceCapFlags() & (CAP_MEM_WINDOW | CAP_MEM_WINDOW_2A | CAP_MEM_WINDOW_2B)) != 0;
    }

    public boolean supportsSrqResize() {
        return (deviceCapFlags() & CAP_SRQ_RESIZE) != 0;
    }

    public boolean supportsRnrNakGeneration() {
        return (deviceCapFlags() & CAP_RC_RNR_NAK_GEN) != 0;
    }

    @Override
    public String toString() {
        return "max_qp_wr=" + maxQpWr() + " max_qp_rd_atom=" + maxQpRdAtom() + " max_qp_init_rd_atom="
                + maxQpInitRdAtom() + " max_srq_wr=" + maxSrqWr() + " max_sge=" + maxSge() + " max_cqe="
                + maxCqe() + " max_mr_size=" + Long.toUnsignedString(maxMrSize()) + " send_with_inv=" + supportsSendWithInvalidate()
                + " mw=" + supportsMemoryWindows() + " cap_flags=0x" + Long.toHexString(deviceCapFlags());
    }
}
