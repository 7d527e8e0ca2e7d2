package io.nvmf4j.nvme;

import io.netty.buffer.ByteBuf;

/**
 * The 16-byte completion queue entry, written where the transport sends it from (NVMe/TCP: inside a
 * CapsuleResp PDU; NVMe/RDMA: a request's response slot): 0 DW0 | 4 DW1 | 8 SQHD u16 | 10 SQID u16 |
 * 12 CID u16 | 14 STATUS u16 (the phase bit, bit 0, is 0 on fabrics). Writes in place, allocates nothing.
 */
public final class Cqe {
    public static final int SIZE = 16;

    private Cqe() {
    }

    /** Writes the entry at {@code at} of {@code b} (the writer index does not move). */
    public static void write(ByteBuf b, int at, int dw0, int dw1, int sqhd, int sqid, int cid, int status) {
        b.setIntLE(at, dw0);
        b.setIntLE(at + 4, dw1);
        b.setShortLE(at + 8, sqhd);
        b.setShortLE(at + 10, sqid);
        b.setShortLE(at + 12, cid);
        b.setShortLE(at + 14, NvmeStatus.toCqeField(status));
    }
}
