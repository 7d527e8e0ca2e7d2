package io.nvmf4j.nvme;

/**
 * Byte offsets of the I/O Command Set specific Identify Controller data structure for the NVM command set
 * (CNS 06h, CSI 00h, 4096 bytes; NVMe NVM Command Set Specification 1.0, figure 109).
 *
 * <pre>
 *  0 VSL u8 | 1 WZSL u8 | 2 WUSL u8 | 3 DMRL u8 | 4 DMRSL u32 | 8 DMSL u64 | 16.. reserved
 * </pre>
 * DMRL: most ranges in one Dataset Management (0: no limit reported); DMRSL: most logical blocks in one range;
 * DMSL: most logical blocks in one whole command (0: none reported).
 */
public final class IdentifyControllerNvm {
    public static final int VSL = 0;
    public static final int WZSL = 1;
    public static final int WUSL = 2;
    public static final int DMRL = 3;
    public static final int DMRSL = 4;
    public static final int DMSL = 8;

    private IdentifyControllerNvm() {
    }
}
