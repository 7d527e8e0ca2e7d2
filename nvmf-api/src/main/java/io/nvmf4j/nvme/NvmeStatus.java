package io.nvmf4j.nvme;

/**
 * NVMe completion status as one int: bits 7:0 status code (SC), bits 10:8 status code type (SCT),
 * bit 14 Do Not Retry (DNR). This is the CQE status field shifted right by one (without the
 * phase tag); {@link #toCqeField(int)} shifts it back.
 *
 * <p>Status is a value, never an exception: handlers end in exactly one {@code complete(status)}.
 */
public final class NvmeStatus {
    public static final int DNR = 1 << 14;

    public static final int SCT_GENERIC = 0;
    public static final int SCT_COMMAND_SPECIFIC = 1;
    public static final int SCT_MEDIA = 2;
    public static final int SCT_PATH = 3;

    public static final int SUCCESS = 0;
    // Generic command status (SCT 0)
    public static final int INVALID_OPCODE = DNR | 0x01;
    public static final int INVALID_FIELD = DNR | 0x02;
    public static final int DATA_TRANSFER_ERROR = 0x04;
    public static final int INTERNAL_ERROR = 0x06;
    /** Command Aborted due to SQ Deletion: its queue (or the whole target) is going away. */
    public static final int ABORTED_SQ_DELETION = 0x08;
    public static final int INVALID_NAMESPACE = DNR | 0x0B;
    public static final int COMMAND_SEQUENCE_ERROR = DNR | 0x0C;
    public static final int INVALID_SGL_SEGMENT = DNR | 0x0D;
    public static final int INVALID_SGL_COUNT = DNR | 0x0E;
    public static final int DATA_SGL_LENGTH_INVALID = DNR | 0x0F;
    public static final int SGL_TYPE_INVALID = DNR | 0x11;
    public static final int SGL_OFFSET_INVALID = DNR | 0x16;
    /**
     * Command Interrupted (21h): processing was interrupted and the controller could not complete the command; the
     * host should retry (DNR clear, as the spec requires). Here: the backend did not complete it in time.
     */
    public static final int COMMAND_INTERRUPTED = 0x21;
    public static final int TRANSIENT_TRANSPORT_ERROR = 0x22;
    public static final int LBA_OUT_OF_RANGE = DNR | 0x80;
    public static final int CAPACITY_EXCEEDED = DNR | 0x81;
    /** With DNR: the namespace will not become ready (its device is gone). */
    public static final int NAMESPACE_NOT_READY = DNR | 0x82;
    // Command specific status (SCT 1)
    public static final int INVALID_QUEUE_ID = DNR | (1 << 8) | 0x01;
    public static final int AER_LIMIT_EXCEEDED = DNR | (1 << 8) | 0x05;
    public static final int INVALID_LOG_PAGE = DNR | (1 << 8) | 0x09;
    public static final int FEATURE_NOT_SAVEABLE = DNR | (1 << 8) | 0x0D;
    public static final int CONNECT_INCOMPATIBLE_FORMAT = DNR | (1 << 8) | 0x80;
    public static final int CONNECT_CONTROLLER_BUSY = (1 << 8) | 0x81;
    public static final int CONNECT_INVALID_PARAMETERS = DNR | (1 << 8) | 0x82;
    public static final int CONNECT_INVALID_HOST = DNR | (1 << 8) | 0x84;
    /** The queue has not completed DH-HMAC-CHAP authentication (NVMe-oF: commands other than Fabrics ones). */
    public static final int AUTH_REQUIRED = DNR | (1 << 8) | 0x91;
    // Media and data integrity errors (SCT 2)
    public static final int WRITE_FAULT = (2 << 8) | 0x80;
    public static final int UNRECOVERED_READ_ERROR = (2 << 8) | 0x81;
    public static final int COMPARE_FAILURE = DNR | (2 << 8) | 0x85;
    // Path related status (SCT 3): no DNR, a multipath host retries on another path
    public static final int ANA_PERSISTENT_LOSS = (3 << 8) | 0x01;
    public static final int ANA_INACCESSIBLE = (3 << 8) | 0x02;
    public static final int ANA_TRANSITION = (3 << 8) | 0x03;

    private NvmeStatus() {
    }

    public static int of(int sct, int sc, boolean dnr) {
        return (dnr ? DNR : 0) | ((sct & 0x7) << 8) | (sc & 0xFF);
    }

    public static int sc(int status) {
        return status & 0xFF;
    }

    public static int sct(int status) {
        return (status >>> 8) & 0x7;
    }

    public static boolean dnr(int status) {
        return (status & DNR) != 0;
    }

    public static boolean isSuccess(int status) {
        return (status & 0x7FF) == 0;
    }

    /** The 16-bit CQE status field (phase tag 0). */
    public static int toCqeField(int status) {
        return (status << 1) & 0xFFFF;
    }

    /** Inverse of {@link #toCqeField(int)}. */
    public static int fromCqeField(int field) {
        return (field >>> 1) & 0x7FFF;
    }

    public static String describe(int status) {
        return String.format("SCT %d SC 0x%02x%s", sct(status), sc(status), dnr(status) ? " DNR" : "");
    }
}
