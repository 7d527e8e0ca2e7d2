package io.nvmf4j.nvme;

/**
 * Byte offsets of the Identify Controller data structure (CNS 01h, 4096 bytes; NVMe Base 2.0 figure
 * 275 and NVMe-oF 1.1 figure 23 for the fabrics fields).
 */
public final class IdentifyController {
    public static final int SIZE = 4096;
    public static final int VID = 0;
    public static final int SSVID = 2;
    public static final int SN = 4;
    public static final int SN_LEN = 20;
    public static final int MN = 24;
    public static final int MN_LEN = 40;
    public static final int FR = 64;
    public static final int FR_LEN = 8;
    public static final int RAB = 72;
    public static final int IEEE = 73;
    public static final int CMIC = 76;
    public static final int MDTS = 77;
    public static final int CNTLID = 78;
    public static final int VER = 80;
    public static final int OAES = 92;
    public static final int CTRATT = 96;
    public static final int CNTRLTYPE = 111;
    public static final int OACS = 256;
    public static final int ACL = 258;
    public static final int AERL = 259;
    public static final int FRMW = 260;
    public static final int LPA = 261;
    public static final int ELPE = 262;
    public static final int NPSS = 263;
    public static final int WCTEMP = 266;
    public static final int CCTEMP = 268;
    public static final int KAS = 320;
    public static final int ANATT = 342;
    public static final int ANACAP = 343;
    public static final int ANAGRPMAX = 344;
    public static final int NANAGRPID = 348;
    /** Command Quiesce Time (TP4129), 16 bits, in milliseconds. */
    public static final int CQT = 386;
    public static final int SQES = 512;
    public static final int CQES = 513;
    public static final int MAXCMD = 514;
    public static final int NN = 516;
    public static final int ONCS = 520;
    public static final int VWC = 525;
    public static final int SGLS = 536;
    public static final int MNAN = 540;
    public static final int SUBNQN = 768;
    public static final int NQN_LEN = 256;
    public static final int IOCCSZ = 1792;
    public static final int IORCSZ = 1796;
    public static final int ICDOFF = 1800;
    public static final int FCATT = 1802;
    public static final int MSDBD = 1803;
    public static final int OFCS = 1804;

    /** VWC bit 0: a volatile write cache is present; bits 2:1 10b: Flush does not support NSID FFFFFFFFh. */
    public static final int VWC_PRESENT = 0x1;
    public static final int VWC_NO_FLUSH_BROADCAST = 0x2 << 1;

    /** CMIC bit 3: Asymmetric Namespace Access reporting. */
    public static final int CMIC_ANA = 0x8;
    /**
     * ANACAP: the five states reported (bits 4:0) and bit 6: a namespace's ANAGRPID does not change while it is
     * attached.
     */
    public static final int ANACAP_ALL_STATES_FIXED_GROUP = 0x1F | 0x40;
    /** ANATT: seconds a host waits in the change state before it gives up on the path (the Linux target's 10). */
    public static final int ANA_TRANSITION_TIME_S = 10;

    public static final int CNTRLTYPE_IO = 1;
    public static final int CNTRLTYPE_DISCOVERY = 2;

    private IdentifyController() {
    }
}
