package io.nvmf4j.nvme;

/** Command opcodes and fabrics command types used by the target. */
public final class Opcodes {
    public static final int FABRICS = 0x7F;

    public static final int FCTYPE_PROPERTY_SET = 0x00;
    public static final int FCTYPE_CONNECT = 0x01;
    public static final int FCTYPE_PROPERTY_GET = 0x04;
    public static final int FCTYPE_AUTH_SEND = 0x05;
    public static final int FCTYPE_AUTH_RECV = 0x06;
    public static final int FCTYPE_DISCONNECT = 0x08;

    // Admin
    public static final int ADMIN_GET_LOG_PAGE = 0x02;
    public static final int ADMIN_IDENTIFY = 0x06;
    public static final int ADMIN_ABORT = 0x08;
    public static final int ADMIN_SET_FEATURES = 0x09;
    public static final int ADMIN_GET_FEATURES = 0x0A;
    public static final int ADMIN_ASYNC_EVENT_REQUEST = 0x0C;
    public static final int ADMIN_KEEP_ALIVE = 0x18;

    // NVM command set
    public static final int IO_FLUSH = 0x00;
    public static final int IO_WRITE = 0x01;
    public static final int IO_READ = 0x02;
    public static final int IO_COMPARE = 0x05;
    public static final int IO_WRITE_ZEROES = 0x08;
    public static final int IO_DATASET_MANAGEMENT = 0x09;
    public static final int IO_RESERVATION_REGISTER = 0x0D;
    public static final int IO_RESERVATION_REPORT = 0x0E;
    public static final int IO_RESERVATION_ACQUIRE = 0x11;
    public static final int IO_RESERVATION_RELEASE = 0x15;

    // Log page identifiers
    public static final int LID_SUPPORTED_LOG_PAGES = 0x00;
    public static final int LID_ERROR = 0x01;
    public static final int LID_SMART = 0x02;
    public static final int LID_FIRMWARE_SLOT = 0x03;
    public static final int LID_CHANGED_NS_LIST = 0x04;
    public static final int LID_COMMANDS_EFFECTS = 0x05;
    public static final int LID_DISCOVERY = 0x70;
    public static final int LID_RESERVATION_NOTIFICATION = 0x80;

    // Feature identifiers
    public static final int FID_ARBITRATION = 0x01;
    public static final int FID_POWER_MANAGEMENT = 0x02;
    public static final int FID_TEMPERATURE_THRESHOLD = 0x04;
    public static final int FID_VOLATILE_WRITE_CACHE = 0x06;
    public static final int FID_WRITE_ATOMICITY_NORMAL = 0x0A;
    public static final int FID_NUMBER_OF_QUEUES = 0x07;
    public static final int FID_ASYNC_EVENT_CONFIG = 0x0B;
    public static final int FID_TIMESTAMP = 0x0E;
    public static final int FID_KEEP_ALIVE_TIMER = 0x0F;
    public static final int FID_HOST_IDENTIFIER = 0x81;
    public static final int FID_RESERVATION_NOTIFICATION_MASK = 0x82;
    public static final int FID_RESERVATION_PERSISTENCE = 0x83;

    // Identify CNS values
    public static final int CNS_NAMESPACE = 0x00;
    public static final int CNS_CONTROLLER = 0x01;
    public static final int CNS_ACTIVE_NS_LIST = 0x02;
    public static final int CNS_NS_DESCRIPTORS = 0x03;
    /** I/O Command Set specific Identify Controller (CSI in cdw11 bits 31:24). */
    public static final int CNS_CSI_CONTROLLER = 0x06;
    /** I/O Command Set Independent Identify Namespace (a Linux host of VER 2.0 asks for it before CNS 00h). */
    public static final int CNS_CS_INDEPENDENT_NAMESPACE = 0x08;

    private Opcodes() {
    }
}
