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

    /** The highest ANA group id (ANAGRPMAX), and the most groups a page ever holds. */
    public static final int GROUPS_MAX = 128;

    private AnaLog() {
    }

    /**
     * NANAGRPID: how many groups a controller with transfers of up to {@code mdtsBytes} reports for a subsystem of
     * {@code maxNamespaces} (MNAN). A host sizes its buffer for the page as 16 + 32 x NANAGRPID + 4 x MNAN bytes and
     * reads it in one command; Linux turns ANA off when that exceeds MDTS. So: {@link #GROUPS_MAX}, or fewer when
     * that many do not fit; below 1 when not even one fits (the configuration validator refuses that).
     */
    public static int groupsFitting(int mdtsBytes, int maxNamespaces) {
        return Math.min(GROUPS_MAX, (mdtsBytes - HEADER_SIZE - 4 * maxNamespaces) / DESCRIPTOR_SIZE);
    }

    /** The page's size as the host sizes its buffer: {@code groups} descriptors and, but with RGO, every NSID. */
    public static int pageSize(int groups, int maxNamespaces, boolean groupsOnly) {
        return HEADER_SIZE + groups * DESCRIPTOR_SIZE + (groupsOnly ? 0 : 4 * maxNamespaces);
    }
}
