package io.nvmf4j.auth;

/**
 * DH-HMAC-CHAP message layouts (NVMe Base 2.x section 8.3.4.5; Linux {@code include/linux/nvme.h}). All little-endian.
 *
 * <pre>
 * Authentication Send / Receive SQE: 41 SPSP0 u8 (01h) | 42 SPSP1 u8 (01h) | 43 SECP u8 (E9h) | 44 TL / AL u32
 * every message:   0 AUTH_TYPE u8 (00h common, 01h DH-HMAC-CHAP) | 1 AUTH_ID u8 | 4 T_ID u16
 * Negotiate:       6 SC_C u8 | 7 NAPD u8 | 8 descriptors: AUTHID u8 (01h) | 2 HALEN | 3 DHLEN | 4 IDLIST[60]
 *                  (hash ids at 4.., DH group ids at 34..); 64 bytes each
 * Challenge:       6 HL u8 | 8 HASHID u8 | 9 DHGID u8 | 10 DHVLEN u16 | 12 SEQNUM u32 | 16 C1[HL] | DHV[DHVLEN]
 * Reply:           6 HL u8 | 8 CVALID u8 | 10 DHVLEN u16 | 12 SEQNUM u32 | 16 R1[HL] | C2[HL] | DHV[DHVLEN]
 * Success1:        6 HL u8 | 8 RVALID u8 | 16 R2[HL]
 * Success2:        16 bytes
 * Failure1/2:      6 RESCODE u8 (01h) | 7 RESCODE_EXP u8
 * </pre>
 */
public final class AuthMessages {
    public static final int SQE_SPSP0 = 41;
    public static final int SQE_SPSP1 = 42;
    public static final int SQE_SECP = 43;
    public static final int SQE_LENGTH = 44;
    public static final int SECP_DHCHAP = 0xE9;
    public static final int SPSP = 0x01;

    public static final int TYPE_COMMON = 0x00;
    public static final int TYPE_DHCHAP = 0x01;
    public static final int NEGOTIATE = 0x00;
    public static final int CHALLENGE = 0x01;
    public static final int REPLY = 0x02;
    public static final int SUCCESS1 = 0x03;
    public static final int SUCCESS2 = 0x04;
    public static final int FAILURE2 = 0xF0;
    public static final int FAILURE1 = 0xF1;

    public static final int AUTH_TYPE = 0;
    public static final int AUTH_ID = 1;
    public static final int T_ID = 4;
    public static final int HEADER = 16;
    public static final int NEG_SC_C = 6;
    public static final int NEG_NAPD = 7;
    public static final int NEG_DESCRIPTORS = 8;
    public static final int DESC_SIZE = 64;
    public static final int DESC_AUTHID = 0;
    public static final int DESC_HALEN = 2;
    public static final int DESC_DHLEN = 3;
    public static final int DESC_HASH_IDS = 4;
    public static final int DESC_DH_IDS = 34;
    public static final int MAX_IDS = 30;
    public static final int AUTHID_DHCHAP = 0x01;
    public static final int HL = 6;
    public static final int CHAL_HASHID = 8;
    public static final int CHAL_DHGID = 9;
    public static final int DHVLEN = 10;
    public static final int SEQNUM = 12;
    public static final int REPLY_CVALID = 8;
    public static final int SUCCESS1_RVALID = 8;
    public static final int FAIL_RESCODE = 6;
    public static final int FAIL_RESCODE_EXP = 7;
    public static final int FAILURE_SIZE = 8;

    /** RESCODE: authentication failed. */
    public static final int RESCODE_FAILED = 0x01;
    /** RESCODE_EXP values. */
    public static final int FAILED = 0x01;
    public static final int NOT_USABLE = 0x02;
    public static final int CONCAT_MISMATCH = 0x03;
    public static final int HASH_UNUSABLE = 0x04;
    public static final int DHGROUP_UNUSABLE = 0x05;
    public static final int INCORRECT_PAYLOAD = 0x06;
    public static final int INCORRECT_MESSAGE = 0x07;

    /** Largest TL / AL the target takes: a Reply with SHA-512 and ffdhe8192 is 16 + 2 * 64 + 1024 bytes. */
    public static final int MAX_LENGTH = 4096;

    private AuthMessages() {
    }

    /** The meaning of a RESCODE_EXP, for logs and metrics. */
    public static String reason(int rescodeExp) {
        return switch (rescodeExp) {
            case FAILED -> "failed";
            case NOT_USABLE -> "protocol not usable";
            case CONCAT_MISMATCH -> "secure channel concatenation mismatch";
            case HASH_UNUSABLE -> "hash function not usable";
            case DHGROUP_UNUSABLE -> "DH group not usable";
            case INCORRECT_PAYLOAD -> "incorrect payload";
            case INCORRECT_MESSAGE -> "incorrect protocol message";
            default -> "reason " + rescodeExp;
        };
    }
}
