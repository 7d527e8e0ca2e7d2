package io.nvmf4j.transport.rdma;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * NVMe/RDMA CM private data (NVMe-oF 1.1 section 7.3.2; Linux {@code include/linux/nvme-rdma.h}):
 * the host's request, our accept and our reject, and the negotiation of one queue pair.
 *
 * <pre>
 * RDMA_CM_REQUEST (32 B): 0 RECFMT u16 | 2 QID u16 | 4 HRQSIZE u16 | 6 HSQSIZE u16 | 8 CNTLID u16 | 10 reserved[22]
 * RDMA_CM_ACCEPT  (32 B): 0 RECFMT u16 | 2 CRQSIZE u16 | 4 reserved[28]
 * RDMA_CM_REJECT  (4 B):  0 RECFMT u16 | 2 STS u16
 * </pre>
 * All fields little-endian. Parsing has no side effects; it returns a reject status or the sizes.
 */
final class CmPrivateData {
    static final int REQUEST_SIZE = 32;
    static final int ACCEPT_SIZE = 32;
    static final int RECFMT = 0;
    static final int QID = 2;
    static final int HRQSIZE = 4;
    static final int HSQSIZE = 6;
    static final int CNTLID = 8;
    static final int CRQSIZE = 2;
    static final int STS = 2;

    /** Reject status codes (NVMe-oF 1.1 figure 52). */
    static final int REJECT_INVALID_PRIVATE_DATA_LENGTH = 1;
    static final int REJECT_INVALID_RECFMT = 2;
    static final int REJECT_INVALID_QID = 3;
    static final int REJECT_INVALID_HSQSIZE = 4;
    static final int REJECT_INVALID_HRQSIZE = 5;
    static final int REJECT_NO_RESOURCES = 6;
    static final int REJECT_INVALID_IRD = 7;
    static final int REJECT_INVALID_ORD = 8;

    private CmPrivateData() {
    }

    /**
     * The outcome of a CONNECT_REQUEST: {@code reject} is 0 when accepted, else the reject status;
     * then {@code depth} is the queue depth and {@code readDepth} the RDMA READs we may keep outstanding.
     */
    record Negotiation(int reject, int qid, int hrqsize, int hsqsize, int cntlid, int depth, int readDepth) {
        boolean accepted() {
            return reject == 0;
        }
    }

    /**
     * Checks the host's private data and sizes the queue pair: depth = min(our limit for the queue type,
     * device limit, HRQSIZE, HSQSIZE + 1); read depth = min(ours, device, the host's initiator depth as the
     * passive side sees it).
     *
     * @param privateData     the event's private data (position 0, limit = its length)
     * @param initiatorDepth  the CONNECT_REQUEST's initiator depth (the host's responder resources)
     * @param maxIoQueues     highest I/O qid accepted
     * @param maxQueueDepth   our largest I/O queue (entries)
     * @param adminQueueDepth our largest admin queue (entries)
     * @param deviceMaxDepth  entries the device can hold per queue pair (max_qp_wr / WRs per request)
     * @param maxReadDepth    min(our read depth, device max_qp_init_rd_atom)
     */
    static Negotiation negotiate(ByteBuffer privateData, int initiatorDepth, int maxIoQueues, int maxQueueDepth,
                                 int adminQueueDepth, int deviceMaxDepth, int maxReadDepth) {
        ByteBuffer pd = privateData.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (pd.remaining() < REQUEST_SIZE) {
            return reject(REJECT_INVALID_PRIVATE_DATA_LENGTH);
        }
        int base = pd.position();
        int recfmt = Short.toUnsignedInt(pd.getShort(base + RECFMT));
        int qid = Short.toUnsignedInt(pd.getShort(base + QID));
        int hrqsize = Short.toUnsignedInt(pd.getShort(base + HRQSIZE));
        int hsqsize = Short.toUnsignedInt(pd.getShort(base + HSQSIZE));
        int cntlid = Short.toUnsignedInt(pd.getShort(base + CNTLID));
        if (recfmt != 0) {
            return reject(REJECT_INVALID_RECFMT);
        }
        if (qid > maxIoQueues) {
            return reject(REJECT_INVALID_QID);
        }
        int max = qid == 0 ? adminQueueDepth : maxQueueDepth;
        if (hsqsize == 0 || hsqsize + 1 > max) {
            return reject(REJECT_INVALID_HSQSIZE);
        }
        if (hrqsize < hsqsize + 1 || hrqsize > max) {
            return reject(REJECT_INVALID_HRQSIZE);
        }
        if (initiatorDepth == 0) {
            return reject(REJECT_INVALID_IRD);
        }
        int depth = Math.min(Math.min(max, deviceMaxDepth), Math.min(hrqsize, hsqsize + 1));
        if (depth < 1) {
            return reject(REJECT_NO_RESOURCES);
        }
        int readDepth = Math.max(1, Math.min(maxReadDepth, initiatorDepth));
        return new Negotiation(0, qid, hrqsize, hsqsize, cntlid, depth, readDepth);
    }

    private static Negotiation reject(int status) {
        return new Negotiation(status, 0, 0, 0, 0, 0, 0);
    }

    /** RDMA_CM_REJECT private data: RECFMT 0 and the status. */
    static byte[] rejectData(int status) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putShort(RECFMT, (short) 0)
            .putShort(STS, (short) status).array();
    }

    /** RDMA_CM_ACCEPT private data: RECFMT 0 and CRQSIZE (our receive queue size for this queue pair). */
    static byte[] acceptData(int crqsize) {
        return ByteBuffer.allocate(ACCEPT_SIZE).order(ByteOrder.LITTLE_ENDIAN).putShort(RECFMT, (short) 0)
            .putShort(CRQSIZE, (short) crqsize).array();
    }

    /** Reject status as a word for logs. */
    static String describeReject(int status) {
        return switch (status) {
            case REJECT_INVALID_PRIVATE_DATA_LENGTH -> "invalid private data length";
            case REJECT_INVALID_RECFMT -> "invalid RECFMT";
            case REJECT_INVALID_QID -> "invalid QID";
            case REJECT_INVALID_HSQSIZE -> "invalid HSQSIZE";
            case REJECT_INVALID_HRQSIZE -> "invalid HRQSIZE";
            case REJECT_NO_RESOURCES -> "no resources";
            case REJECT_INVALID_IRD -> "invalid IRD";
            case REJECT_INVALID_ORD -> "invalid ORD";
            default -> "status " + status;
        };
    }
}
