package io.nvmf4j.nvme;

/**
 * The Asymmetric Namespace Access log page (LID 0Ch; NVMe Base 2.0 figure 224): a header, then one descriptor per
 * ANA group, each followed by the NSIDs of its namespaces (none with Return Groups Only).
 *
 * <pre>
 * header      0: CHGCNT u64 | 8: NGRPS u16 | 10: reserved (6)
 * descriptor  0: ANAGRPID u32 | 4: NNSIDS u32 | 8: CHGCNT u64 | 16: ANAS u8 (bits 3:0) | 17: reserved (15)
 *            32: NSID u32 x NNSIDS
 * </pre>
 */
public final class AnaLog {
    public static final int LID = 0x0C;
    public static final int HEADER_SIZE = 16;
    public static final int CHGCNT = 0;
    public static final int NGRPS = 8;
    public static final int DESCRIPTOR_SIZE = 32;
    public static final int D_ANAGRPID = 0;
    public static final int D_NNSIDS = 4;
    public static final int D_CHGCNT = 8;
    public static final int D_ANAS = 16;
    /** Log Specific Field (CDW10 bits 14:8) bit 0: Return Groups Only. */
    public static final int LSP_RGO = 1 << 8;

    /** The highest ANA group id, and the number of groups (ANAGRPMAX = NANAGRPID, as the Linux target). */
    public static final int GROUPS_MAX = 128;

    private AnaLog() {
    }
}
