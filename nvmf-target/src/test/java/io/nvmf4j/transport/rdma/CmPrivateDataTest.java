package io.nvmf4j.transport.rdma;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.assertj.core.api.Assertions.assertThat;

class CmPrivateDataTest {
    private static ByteBuffer request(int recfmt, int qid, int hrqsize, int hsqsize, int cntlid, int length) {
        ByteBuffer b = ByteBuffer.allocate(56).order(ByteOrder.LITTLE_ENDIAN);
        b.putShort(0, (short) recfmt).putShort(2, (short) qid).putShort(4, (short) hrqsize)
            .putShort(6, (short) hsqsize).putShort(8, (short) cntlid);
        return b.limit(length).order(ByteOrder.BIG_ENDIAN);
    }

    private static CmPrivateData.Negotiation negotiate(ByteBuffer pd, int ird) {
        return CmPrivateData.negotiate(pd, ird, 8, 128, 32, 1000, 16);
    }

    @Test
    void linuxAdminQueueIsAccepted() {
        CmPrivateData.Negotiation n = negotiate(request(0, 0, 32, 31, 0xFFFF, 56), 128);
        assertThat(n.accepted()).isTrue();
        assertThat(n.depth()).isEqualTo(32);
        assertThat(n.readDepth()).isEqualTo(16);
        assertThat(n.cntlid()).isEqualTo(0xFFFF);
    }

    @Test
    void ioQueueDepthIsTheSmallestLimit() {
        assertThat(negotiate(request(0, 1, 128, 127, 1, 32), 4).depth()).isEqualTo(128);
        assertThat(negotiate(request(0, 1, 128, 127, 1, 32), 4).readDepth()).isEqualTo(4);
        assertThat(CmPrivateData.negotiate(request(0, 1, 128, 127, 1, 32), 128, 8, 128, 32, 100, 16).depth())
            .isEqualTo(100);
        assertThat(negotiate(request(0, 2, 64, 31, 1, 32), 8).depth()).isEqualTo(32);
    }

    @Test
    void rejectCodes() {
        assertThat(negotiate(request(0, 0, 32, 31, 0, 31), 8).reject()).isEqualTo(1);
        assertThat(negotiate(request(0, 0, 32, 31, 0, 0), 8).reject()).isEqualTo(1);
        assertThat(negotiate(request(1, 0, 32, 31, 0, 32), 8).reject()).isEqualTo(2);
        assertThat(negotiate(request(0, 9, 128, 127, 0, 32), 8).reject()).isEqualTo(3);
        assertThat(negotiate(request(0, 1, 128, 0, 0, 32), 8).reject()).isEqualTo(4);
        assertThat(negotiate(request(0, 1, 200, 199, 0, 32), 8).reject()).isEqualTo(4);
        assertThat(negotiate(request(0, 0, 64, 32, 0, 32), 8).reject()).isEqualTo(4);
        assertThat(negotiate(request(0, 1, 100, 127, 0, 32), 8).reject()).isEqualTo(5);
        assertThat(negotiate(request(0, 1, 129, 127, 0, 32), 8).reject()).isEqualTo(5);
        assertThat(negotiate(request(0, 1, 128, 127, 0, 32), 0).reject()).isEqualTo(7);
    }

    @Test
    void acceptAndRejectData() {
        assertThat(CmPrivateData.rejectData(7)).containsExactly(0, 0, 7, 0);
        byte[] rep = CmPrivateData.acceptData(128);
        assertThat(rep).hasSize(32);
        assertThat(rep[0]).isEqualTo((byte) 0);
        assertThat(rep[2]).isEqualTo((byte) 128);
        assertThat(rep[3]).isEqualTo((byte) 0);
    }
}
