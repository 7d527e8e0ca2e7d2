package io.nvmf4j.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WorkRequestsTest {

    @Test
    void sendRequestsReadBackWhatWasWritten() {
        try (SendWorkRequests w = new SendWorkRequests(4, 3)) {
            assertThat(w.capacity()).isEqualTo(4);
            assertThat(w.badIndex()).isEqualTo(-1);
            w.setRdmaWrite(0, 0xfeedL, 0x1000, 4096, 0x11, 0xdead_beef_0000L, 0x22, 0);
            w.setSendWithInvalidate(1, 7, 0x2000, 16, 0x11, 0x33, Verbs.SEND_SIGNALED);
            w.setRdmaRead(2, 8, 0x3000, 8192, 0x11, 0x4000, 0x44, Verbs.SEND_SIGNALED);
            w.setSend(3, -1L, 0x5000, 64, 0x11, Verbs.SEND_SIGNALED | Verbs.SEND_INLINE);
            w.setNumSge(3, 3);
            w.setSge(3, 2, 0x6000, 32, 0x55);

            assertThat(w.wrId(0)).isEqualTo(0xfeedL);
            assertThat(w.opcode(0)).isEqualTo(Verbs.WR_RDMA_WRITE);
            assertThat(w.flags(0)).isZero();
            assertThat(w.remoteAddr(0)).isEqualTo(0xdead_beef_0000L);
            assertThat(w.rkey(0)).isEqualTo(0x22);
            assertThat(w.numSge(0)).isEqualTo(1);
            assertThat(w.sgeAddress(0, 0)).isEqualTo(0x1000);
            assertThat(w.sgeLength(0, 0)).isEqualTo(4096);
            assertThat(w.sgeLkey(0, 0)).isEqualTo(0x11);

            assertThat(w.opcode(1)).isEqualTo(Verbs.WR_SEND_WITH_INV);
            assertThat(w.invalidateRkey(1)).isEqualTo(0x33);
            assertThat(w.flags(1)).isEqualTo(Verbs.SEND_SIGNALED);

            assertThat(w.opcode(2)).isEqualTo(Verbs.WR_RDMA_READ);
            assertThat(w.remoteAddr(2)).isEqualTo(0x4000);
            assertThat(w.sgeLength(2, 0)).isEqualTo(8192);

            assertThat(w.wrId(3)).isEqualTo(-1L);
            assertThat(w.numSge(3)).isEqualTo(3);
            assertThat(w.sgeAddress(3, 2)).isEqualTo(0x6000);
            assertThat(w.sgeLkey(3, 2)).isEqualTo(0x55);
            // neighbours untouched
            assertThat(w.sgeAddress(3, 1)).isZero();
            assertThat(w.sgeAddress(2, 0)).isEqualTo(0x3000);
        }
    }

    /** The library wired each WR's sg_list to its own SGEs: the pointer Java reads is address-consistent. */
    @Test
    void sgListPointsIntoTheArray() {
        try (SendWorkRequests w = new SendWorkRequests(3, 2)) {
            int wrSize = Layout.intValue("send_wr.size");
            int sgList = Layout.intValue("send_wr.sg_list");
            long sgeRegion = w.address() + NativeArray.HEADER + 3L * wrSize;
            for (int i = 0; i < 3; i++) {
                long ptr = w.buffer.getLong(NativeArray.HEADER + i * wrSize + sgList);
                assertThat(ptr).isEqualTo(sgeRegion + i * 2L * Layout.value("sge.size"));
            }
            assertThat(w.address() % 64).isZero();
        }
    }

    @Test
    void recvRequests() {
        try (RecvWorkRequests w = new RecvWorkRequests(2, 1)) {
            w.set(1, 99, 0xabc000, 4160, 0x77);
            assertThat(w.wrId(1)).isEqualTo(99);
            assertThat(w.numSge(1)).isEqualTo(1);
            assertThat(w.sgeLength(1, 0)).isEqualTo(4160);
            assertThat(w.wrId(0)).isZero();
        }
    }

    @Test
    void completionsAndEventsStartZeroed() {
        try (Completions c = new Completions(8); CmEvent e = new CmEvent()) {
            assertThat(c.wrId(7)).isZero();
            assertThat(c.status(7)).isEqualTo(Verbs.WC_SUCCESS);
            assertThat(e.eventHandle()).isZero();
            assertThat(e.privateDataLength()).isZero();
            assertThat(e.privateData().remaining()).isZero();
            assertThat(e.ack()).isEqualTo(-Errno.EINVAL);
        }
    }

    @Test
    void indexesOutsideTheArrayThrowInJava() {
        try (SendWorkRequests w = new SendWorkRequests(2, 1)) {
            assertThatThrownBy(() -> w.setSge(0, 1, 0, 0, 0)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> w.setNumSge(0, 2)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> w.setWrId(1_000, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        }
        assertThatThrownBy(() -> new Completions(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
