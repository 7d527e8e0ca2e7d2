package io.nvmf4j.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The offsets come from the compiled library; check they describe plausible structs. */
class LayoutTest {

    @Test
    void abiVersionMatches() {
        assertThat(Layout.value("abi_version")).isEqualTo(Native.ABI_VERSION);
    }

    @Test
    void sendWorkRequestFieldsAreOrderedAlignedAndInside() {
        long size = Layout.value("send_wr.size");
        assertThat(size % 8).isZero();
        assertThat(Layout.value("send_wr.wr_id")).isZero();
        assertThat(Layout.value("send_wr.next")).isEqualTo(8);
        assertThat(Layout.value("send_wr.sg_list")).isEqualTo(16);
        assertOrdered("send_wr.sg_list", "send_wr.num_sge", "send_wr.opcode", "send_wr.send_flags",
                "send_wr.imm_data", "send_wr.wr.rdma.remote_addr", "send_wr.wr.rdma.rkey");
        assertThat(Layout.value("send_wr.imm_data")).isEqualTo(Layout.value("send_wr.invalidate_rkey"));
        assertThat(Layout.value("send_wr.wr.rdma.remote_addr") % 8).isZero();
        assertThat(Layout.value("send_wr.wr.rdma.rkey") + 4).isLessThanOrEqualTo(size);
    }

    @Test
    void recvWorkRequestAndSge() {
        assertThat(Layout.value("recv_wr.wr_id")).isZero();
        assertOrdered("recv_wr.wr_id", "recv_wr.next", "recv_wr.sg_list", "recv_wr.num_sge");
        assertThat(Layout.value("recv_wr.num_sge") + 4).isLessThanOrEqualTo(Layout.value("recv_wr.size"));
        assertThat(Layout.value("sge.size")).isEqualTo(16);
        assertOrdered("sge.addr", "sge.length", "sge.lkey");
    }

    @Test
    void workCompletion() {
        assertThat(Layout.value("wc.wr_id")).isZero();
        assertOrdered("wc.wr_id", "wc.status", "wc.opcode", "wc.vendor_err", "wc.byte_len", "wc.imm_data",
                "wc.qp_num", "wc.src_qp", "wc.wc_flags");
        assertThat(Layout.value("wc.imm_data")).isEqualTo(Layout.value("wc.invalidated_rkey"));
        assertThat(Layout.value("wc.wc_flags") + 4).isLessThanOrEqualTo(Layout.value("wc.size"));
    }

    @Test
    void cmEventHoldsTheLargestPrivateData() {
        long size = Layout.value("cm_event.size");
        assertThat(Layout.value("cm_event.private_data_max")).isGreaterThanOrEqualTo(255);
        assertThat(Layout.value("cm_event.private_data") + Layout.value("cm_event.private_data_max"))
                .isLessThanOrEqualTo(size);
        for (String f : new String[] {"event", "id", "listen_id"}) {
            assertThat(Layout.value("cm_event." + f) % 8).isZero();
        }
    }

    @Test
    void attributeIndexesAreDenseAndDistinct() {
        for (String prefix : new String[] {"device.", "port.", "qp_caps."}) {
            long count = Layout.value(prefix + "count");
            Map<String, Long> all = Layout.all();
            long[] seen = all.entrySet().stream()
                    .filter(e -> e.getKey().startsWith(prefix) && !e.getKey().equals(prefix + "count")
                            && e.getKey().indexOf('.', prefix.length()) < 0)
                    .mapToLong(Map.Entry::getValue).sorted().toArray();
            assertThat(seen).hasSize((int) count);
            for (int i = 0; i < seen.length; i++) {
                assertThat(seen[i]).isEqualTo(i);
            }
        }
    }

    @Test
    void constantsAreDistinctWhereTheyMustBe() {
        assertThat(new int[] {Verbs.WR_SEND, Verbs.WR_SEND_WITH_INV, Verbs.WR_RDMA_WRITE, Verbs.WR_RDMA_READ})
                .doesNotHaveDuplicates();
        assertThat(Verbs.SEND_SIGNALED & Verbs.SEND_INLINE).isZero();
        assertThat(RdmaCm.EVENT_CONNECT_REQUEST).isNotEqualTo(RdmaCm.EVENT_ESTABLISHED);
        assertThat(Errno.EAGAIN).isPositive();
    }

    @Test
    void asyncEventTypesAreDistinctAndOnlyQpEventsNameAQp() {
        int[] qp = {AsyncEvents.QP_FATAL, AsyncEvents.QP_REQ_ERR, AsyncEvents.QP_ACCESS_ERR, AsyncEvents.COMM_EST,
            AsyncEvents.SQ_DRAINED, AsyncEvents.PATH_MIG, AsyncEvents.PATH_MIG_ERR, AsyncEvents.QP_LAST_WQE_REACHED};
        int[] other = {AsyncEvents.CQ_ERR, AsyncEvents.DEVICE_FATAL, AsyncEvents.PORT_ACTIVE, AsyncEvents.PORT_ERR,
            AsyncEvents.LID_CHANGE, AsyncEvents.PKEY_CHANGE, AsyncEvents.SM_CHANGE, AsyncEvents.SRQ_ERR,
            AsyncEvents.SRQ_LIMIT_REACHED, AsyncEvents.CLIENT_REREGISTER, AsyncEvents.GID_CHANGE};
        int[] all = java.util.stream.IntStream.concat(java.util.Arrays.stream(qp), java.util.Arrays.stream(other))
                .toArray();
        assertThat(all).doesNotHaveDuplicates();
        for (int t : qp) {
            assertThat(AsyncEvents.isQpEvent(t)).as(AsyncEvents.name(t)).isTrue();
        }
        for (int t : other) {
            assertThat(AsyncEvents.isQpEvent(t)).as(AsyncEvents.name(t)).isFalse();
        }
        assertThat(AsyncEvents.name(AsyncEvents.QP_LAST_WQE_REACHED)).containsIgnoringCase("last WQE");
        assertThat(Verbs.TRANSPORT_IB).isNotEqualTo(Verbs.TRANSPORT_IWARP);
        assertThat(Native.getAsyncEvent(0, new long[3])).isEqualTo(-Errno.EINVAL);
        assertThat(Native.deviceTransport(0)).isEqualTo(-Errno.EINVAL);
        assertThat(Native.acceptRts(0, null, 0, 1, 6)).isEqualTo(-Errno.EINVAL);
    }

    @Test
    void unknownKeyNamesItself() {
        assertThatThrownBy(() -> Layout.value("no.such.key")).hasMessageContaining("no.such.key");
    }

    private static void assertOrdered(String... keys) {
        for (int i = 1; i < keys.length; i++) {
            assertThat(Layout.value(keys[i])).as(keys[i] + " after " + keys[i - 1])
                    .isGreaterThan(Layout.value(keys[i - 1]));
        }
    }
}
