package io.nvmf4j.rdma;

/** {@code struct ibv_device_attr}: the limits and capabilities a transport sizes itself by. */
public final class DeviceAttributes {
    private static final long CAP_MEM_MGT_EXTENSIONS = Layout.value("device.cap.MEM_MGT_EXTENSIONS");
    private static final long CAP_MEM_WINDOW = Layout.value("device.cap.MEM_WINDOW");
    private static final long CAP_MEM_WINDOW_2A = Layout.value("device.cap.MEM_WINDOW_TYPE_2A");
    private static final long CAP_MEM_WINDOW_2B = Layout.value("device.cap.MEM_WINDOW_TYPE_2B");
    private static final long CAP_SRQ_RESIZE = Layout.value("device.cap.SRQ_RESIZE");
    private static final long CAP_RC_RNR_NAK_GEN = Layout.value("device.cap.RC_RNR_NAK_GEN");

    private final long[] values;

    DeviceAttributes(long[] values) {
        this.values = values.clone();
    }

    private long get(String field) {
        return values[Layout.intValue("device." + field)];
    }

    public int maxQp() {
        return (int) get("max_qp");
    }

    /** Work requests per send or receive queue. */
    public int maxQpWr() {
        return (int) get("max_qp_wr");
    }

    /** RDMA READs a QP can have outstanding as responder (the host's IRD toward us). */
    public int maxQpRdAtom() {
        return (int) get("max_qp_rd_atom");
    }

    /** RDMA READs a QP can have outstanding as initiator (our read depth). */
    public int maxQpInitRdAtom() {
        return (int) get("max_qp_init_rd_atom");
    }

    public int maxSge() {
        return (int) get("max_sge");
    }

    public int maxSgeRd() {
        return (int) get("max_sge_rd");
    }

    public int maxCq() {
        return (int) get("max_cq");
    }

    public int maxCqe() {
        return (int) get("max_cqe");
    }

    public int maxMr() {
        return (int) get("max_mr");
    }

    /** Unsigned (UINT64_MAX, i.e. -1, on soft-RoCE). */
    public long maxMrSize() {
        return get("max_mr_size");
    }

    public int maxMw() {
        return (int) get("max_mw");
    }

    public int maxSrq() {
        return (int) get("max_srq");
    }

    public int maxSrqWr() {
        return (int) get("max_srq_wr");
    }

    public int maxSrqSge() {
        return (int) get("max_srq_sge");
    }

    public int physPortCnt() {
        return (int) get("phys_port_cnt");
    }

    public int vendorId() {
        return (int) get("vendor_id");
    }

    public int vendorPartId() {
        return (int) get("vendor_part_id");
    }

    /** {@code device_cap_flags} as reported (IBV_DEVICE_* bits). */
    public long deviceCapFlags() {
        return get("device_cap_flags");
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
