package io.nvmf4j.nvme;

/**
 * Discovery log page (LID 70h, NVMe-oF 1.1 figure 39): a 1024-byte header followed by 1024-byte entries.
 *
 * <pre>
 * header:  0 GENCTR u64 | 8 NUMREC u64 | 16 RECFMT u16
 * entry:   0 TRTYPE | 1 ADRFAM | 2 SUBTYPE | 3 TREQ | 4 PORTID u16 | 6 CNTLID u16 | 8 ASQSZ u16
 *          10 EFLAGS u16 | 32 TRSVCID[32] | 256 SUBNQN[256] | 512 TRADDR[256] | 768 TSAS[256]
 * </pre>
 */
public final class DiscoveryLog {
    public static final int HEADER_SIZE = 1024;
    public static final int ENTRY_SIZE = 1024;
    public static final int GENCTR = 0;
    public static final int NUMREC = 8;
    public static final int RECFMT = 16;

    public static final int TRTYPE = 0;
    public static final int ADRFAM = 1;
    public static final int SUBTYPE = 2;
    public static final int TREQ = 3;
    public static final int PORTID = 4;
    public static final int CNTLID = 6;
    public static final int ASQSZ = 8;
    public static final int EFLAGS = 10;
    public static final int TRSVCID = 32;
    public static final int TRSVCID_LEN = 32;
    public static final int SUBNQN = 256;
    public static final int TRADDR = 512;
    public static final int TRADDR_LEN = 256;
    public static final int TSAS = 768;

    public static final int ADRFAM_IPV4 = 1;
    public static final int ADRFAM_IPV6 = 2;
    public static final int SUBTYPE_REFERRAL = 1;
    public static final int SUBTYPE_NVME = 2;
    public static final int SUBTYPE_CURRENT_DISCOVERY = 3;
    /** TREQ: secure channel not specified; SQ flow control disable supported. */
    public static final int TREQ_DISABLE_SQFLOW = 0x04;
    /** TREQ bits 1:0, secure channel: 01b required, 10b not required (01b and 10b as nvmet's addr_treq). */
    public static final int TREQ_SECURE_REQUIRED = 0x01;
    public static final int TREQ_SECURE_NOT_REQUIRED = 0x02;
    /** TSAS for TCP, byte 0 SECTYPE (NVMe/TCP transport specification figure 6): 0 none, 2 TLS 1.3. */
    public static final int TSAS_TCP_SECTYPE = 0;
    public static final int TCP_SECTYPE_NONE = 0;
    public static final int TCP_SECTYPE_TLS13 = 2;

    private DiscoveryLog() {
    }
}
