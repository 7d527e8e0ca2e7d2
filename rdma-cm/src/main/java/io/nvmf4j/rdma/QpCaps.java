package io.nvmf4j.rdma;

/** The capabilities a provider granted to a QP ({@code ibv_qp_init_attr.cap} after create). */
public final class QpCaps {
    final int[] values = new int[Layout.intValue("qp_caps.count")];

    public int maxSendWr() {
        return values[Layout.intValue("qp_caps.max_send_wr")];
    }

    public int maxRecvWr() {
        return values[Layout.intValue("qp_caps.max_recv_wr")];
    }

    public int maxSendSge() {
        return values[Layout.intValue("qp_caps.max_send_sge")];
    }

    public int maxRecvSge() {
        return values[Layout.intValue("qp_caps.max_recv_sge")];
    }

    public int maxInlineData() {
        return values[Layout.intValue("qp_caps.max_inline_data")];
    }

    @Override
    public String toString() {
        return "send_wr=" + maxSendWr() + " recv_wr=" + maxRecvWr() + " send_sge=" + maxSendSge() + " recv_sge="
                + maxRecvSge() + " inline=" + maxInlineData();
    }
}
