package io.nvmf4j.nvme;

/** SGL descriptor identifiers (byte 15 of a descriptor: type in bits 7:4, subtype in bits 3:0). */
public final class Sgl {
    /** Data Block, Offset subtype: data is in the capsule (NVMe-oF in-capsule data). */
    public static final int DATA_BLOCK_OFFSET = 0x01;
    /** Transport SGL Data Block, transport-specific subtype: NVMe/TCP data moved with R2T/H2CData/C2HData. */
    public static final int TRANSPORT_DATA_BLOCK = 0x5A;
    /** Keyed SGL Data Block, address subtype (RDMA). */
    public static final int KEYED_DATA_BLOCK = 0x40;
    /** Keyed SGL Data Block, invalidate-key subtype (RDMA). */
    public static final int KEYED_DATA_BLOCK_INVALIDATE = 0x4F;
    /** Last Segment, Offset subtype (RDMA multi-descriptor). */
    public static final int LAST_SEGMENT_OFFSET = 0x31;

    private Sgl() {
    }
}
