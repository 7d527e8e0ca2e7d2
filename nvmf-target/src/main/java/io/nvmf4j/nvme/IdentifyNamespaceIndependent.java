package io.nvmf4j.nvme;

/**
 * Byte offsets of the I/O Command Set Independent Identify Namespace data structure (CNS 08h, NVMe Base 2.0, 4096
 * bytes): what every command set shares about a namespace. The NMIC, RESCAP and ANAGRPID values are those of CNS 00h.
 *
 * <pre>
 *  0: NSFEAT u8 | 1: NMIC u8 | 2: RESCAP u8 | 3: FPI u8 | 4: ANAGRPID u32 | 8: NSATTR u8 | 9: reserved
 * 10: NVMSETID u16 | 12: ENDGID u16 | 14: NSTAT u8 | 15: reserved to 4095
 * </pre>
 */
public final class IdentifyNamespaceIndependent {
    public static final int NSFEAT = 0;
    public static final int NMIC = 1;
    public static final int RESCAP = 2;
    public static final int FPI = 3;
    public static final int ANAGRPID = 4;
    public static final int NSATTR = 8;
    public static final int NVMSETID = 10;
    public static final int ENDGID = 12;
    /** Namespace Status: bit 0 NRDY, the namespace is ready (a Linux host ignores one that is not). */
    public static final int NSTAT = 14;
    public static final int NSTAT_READY = 0x1;

    private IdentifyNamespaceIndependent() {
    }
}
