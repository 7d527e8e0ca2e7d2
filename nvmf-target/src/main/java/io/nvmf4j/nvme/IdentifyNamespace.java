package io.nvmf4j.nvme;

/** Byte offsets of the Identify Namespace data structure (CNS 00h, NVM command set, 4096 bytes). */
public final class IdentifyNamespace {
    public static final int NSZE = 0;
    public static final int NCAP = 8;
    public static final int NUSE = 16;
    public static final int NSFEAT = 24;
    /** NSFEAT bit 0 THINP: thin provisioning, NUSE reports the blocks allocated. */
    public static final int NSFEAT_THIN = 0x01;
    public static final int NLBAF = 25;
    public static final int FLBAS = 26;
    public static final int NMIC = 30;
    /** Reservation Capabilities: bit 0 PTPL, 1-6 the six types, 7 IEKEY as in NVMe 1.3 and later. */
    public static final int RESCAP = 31;
    public static final int RESCAP_ALL_TYPES = 0x7E;
    public static final int RESCAP_PTPL = 0x01;
    public static final int RESCAP_IEKEY13 = 0x80;
    public static final int DLFEAT = 33;
    /** ANA group identifier (u32). */
    public static final int ANAGRPID = 92;
    public static final int NGUID = 104;
    public static final int EUI64 = 120;
    /** LBA Format 0: MS u16, LBADS u8, RP u8. */
    public static final int LBAF0 = 128;

    /** Namespace Identification Descriptor types (CNS 03h). */
    public static final int NIDT_EUI64 = 1;
    public static final int NIDT_NGUID = 2;
    public static final int NIDT_UUID = 3;

    private IdentifyNamespace() {
    }
}
