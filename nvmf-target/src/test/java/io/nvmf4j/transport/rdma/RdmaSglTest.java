package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.nvmf4j.core.Request;
import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RdmaSglTest {
    private static final int MDTS = 131072;
    private final ByteBuf capsule = Unpooled.buffer(64 + 4096).writerIndex(64 + 4096);
    private final RdmaSgl sgl = new RdmaSgl();

    private static void keyed(ByteBuf b, int at, long addr, int len, int key, int id) {
        b.setLongLE(at, addr);
        b.setMediumLE(at + 8, len);
        b.setIntLE(at + 11, key);
        b.setByte(at + 15, id);
    }

    private int parse(int capsuleData, int xfer, int expected) {
        return sgl.parse(capsule, 0, capsuleData, 4096, xfer, expected, MDTS);
    }

    @Test
    void keyedAddressAndInvalidate() {
        keyed(capsule, 24, 0x1122334455667788L, 8192, 0xA1B2C3D4, 0x40);
        assertThat(parse(0, Request.XFER_C2H, 8192)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(sgl.count).isEqualTo(1);
        assertThat(sgl.address[0]).isEqualTo(0x1122334455667788L);
        assertThat(sgl.length[0]).isEqualTo(8192);
        assertThat(sgl.key[0]).isEqualTo(0xA1B2C3D4);
        assertThat(sgl.invalidate).isFalse();

        keyed(capsule, 24, 0x1000, 1024, 0x77, 0x4F);
        assertThat(parse(0, Request.XFER_H2C, 1024)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(sgl.invalidate).isTrue();
        assertThat(sgl.invalidateKey).isEqualTo(0x77);
        assertThat(sgl.totalLength).isEqualTo(1024);
    }

    @Test
    void inCapsule() {
        capsule.setLongLE(24, 0).setIntLE(32, 4096).setByte(39, 0x01);
        assertThat(parse(4096, Request.XFER_H2C, 4096)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(sgl.inCapsule).isTrue();
        assertThat(sgl.totalLength).isEqualTo(4096);
        // more than arrived
        assertThat(parse(2048, Request.XFER_H2C, 4096)).isEqualTo(NvmeStatus.DATA_SGL_LENGTH_INVALID);
        // offset past the data
        capsule.setLongLE(24, 8192).setIntLE(32, 16);
        assertThat(parse(4096, Request.XFER_H2C, 16)).isEqualTo(NvmeStatus.SGL_OFFSET_INVALID);
        assertThat(sgl.errorLocation).isEqualTo(24);
        // in-capsule for a read
        capsule.setLongLE(24, 0).setIntLE(32, 512);
        assertThat(parse(512, Request.XFER_C2H, 512)).isEqualTo(NvmeStatus.INVALID_FIELD);
    }

    @Test
    void lastSegmentOfKeyedDescriptors() {
        capsule.setLongLE(24, 0).setIntLE(32, 3 * 16).setByte(39, 0x31);
        keyed(capsule, 64, 0x1000, 4096, 1, 0x40);
        keyed(capsule, 80, 0x9000, 8192, 2, 0x4F);
        keyed(capsule, 96, 0x20000, 4096, 3, 0x40);
        assertThat(parse(48, Request.XFER_H2C, 16384)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(sgl.count).isEqualTo(3);
        assertThat(sgl.totalLength).isEqualTo(16384);
        assertThat(sgl.address[1]).isEqualTo(0x9000);
        assertThat(sgl.invalidate).isTrue();
        assertThat(sgl.invalidateKey).isEqualTo(2);
        // a non-keyed descriptor in the list
        capsule.setByte(96 + 15, 0x01);
        assertThat(parse(48, Request.XFER_H2C, 16384)).isEqualTo(NvmeStatus.SGL_TYPE_INVALID);
        assertThat(sgl.count).isZero();
        // the list is longer than the capsule data
        keyed(capsule, 96, 0x20000, 4096, 3, 0x40);
        assertThat(parse(32, Request.XFER_H2C, 16384)).isEqualTo(NvmeStatus.INVALID_SGL_SEGMENT);
        // not a multiple of 16
        capsule.setIntLE(32, 40);
        assertThat(parse(48, Request.XFER_H2C, -1)).isEqualTo(NvmeStatus.INVALID_SGL_SEGMENT);
    }

    /**
     * A Last Segment offset near 2^63: offset + length overflowed to a negative long and passed the
     * bounds check, and the list was read at a negative (int) offset, before the SQE (an
     * IndexOutOfBoundsException on the poll-group thread for receive buffer 0).
     */
    @Test
    void lastSegmentOffsetOverflowIsAnInvalidSegment() {
        keyed(capsule, 64, 0x1000, 512, 1, 0x40);
        for (long offset : new long[] {Long.MAX_VALUE - 15, Long.MAX_VALUE - 255, Long.MAX_VALUE}) {
            capsule.setLongLE(24, offset).setIntLE(32, 16).setByte(39, 0x31);
            assertThat(parse(16, Request.XFER_H2C, 512)).as("offset 0x%x", offset)
                .isEqualTo(NvmeStatus.INVALID_SGL_SEGMENT);
            assertThat(sgl.errorLocation).isEqualTo(24);
        }
        capsule.setLongLE(24, Long.MAX_VALUE - 255).setIntLE(32, 16 * 16);
        assertThat(parse(16, Request.XFER_H2C, -1)).isEqualTo(NvmeStatus.INVALID_SGL_SEGMENT);
    }

    @Test
    void msdbdExceeded() {
        capsule.setLongLE(24, 0).setIntLE(32, 17 * 16).setByte(39, 0x31);
        for (int i = 0; i < 17; i++) {
            keyed(capsule, 64 + 16 * i, 0x1000L * i, 512, i, 0x40);
        }
        assertThat(parse(17 * 16, Request.XFER_H2C, 17 * 512)).isEqualTo(NvmeStatus.INVALID_SGL_COUNT);
        capsule.setIntLE(32, 16 * 16);
        assertThat(parse(17 * 16, Request.XFER_H2C, 16 * 512)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(sgl.count).isEqualTo(16);
    }

    @Test
    void badTypesAndLengths() {
        for (int id : new int[] {0x00, 0x5A, 0x20, 0x30, 0x41, 0x02, 0xFF}) {
            capsule.setByte(39, id);
            assertThat(parse(0, Request.XFER_H2C, -1)).as("id 0x%x", id).isEqualTo(NvmeStatus.SGL_TYPE_INVALID);
            assertThat(sgl.errorLocation).isEqualTo(39);
        }
        keyed(capsule, 24, 0x1000, 4096, 1, 0x40);
        assertThat(parse(0, Request.XFER_C2H, 8192)).isEqualTo(NvmeStatus.DATA_SGL_LENGTH_INVALID);
        assertThat(sgl.errorLocation).isEqualTo(32);
        keyed(capsule, 24, 0x1000, MDTS * 2, 1, 0x40);
        assertThat(parse(0, Request.XFER_C2H, -1)).isEqualTo(NvmeStatus.INVALID_FIELD);
    }
}
