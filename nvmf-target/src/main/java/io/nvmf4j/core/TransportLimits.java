package io.nvmf4j.core;

import io.nvmf4j.config.TcpTransportConfig;

/**
 * Limits a transport advertises to hosts.
 *
 * @param trtype           transport type in the discovery log (3 = TCP, 1 = RDMA)
 * @param inCapsuleDataSize in-capsule data bytes on I/O queues (IOCCSZ = 4 + this / 16)
 * @param mdtsBytes        maximum data transfer size in bytes (a power of two, at least {@link #MIN_MDTS_BYTES})
 * @param maxQueueDepth    largest queue size in entries (CAP.MQES + 1)
 * @param maxIoQueues      I/O queues per controller
 * @param msdbd            SGL descriptors per command (1 for TCP)
 */
public record TransportLimits(int trtype, int inCapsuleDataSize, int mdtsBytes, int maxQueueDepth, int maxIoQueues,
                              int msdbd) {
    public static final int TRTYPE_RDMA = 1;
    public static final int TRTYPE_TCP = 3;
    /**
     * The smallest transfer size MDTS can report: MDTS is the power of two of the minimum memory page size (CAP.MPSMIN,
     * 4 KiB) and its value 0 means "no limit", so one page (2^0) cannot be said; two pages (MDTS 1) can.
     */
    public static final int MIN_MDTS_BYTES = TcpTransportConfig.MIN_MDTS_BYTES;

    public TransportLimits {
        if (mdtsBytes < MIN_MDTS_BYTES || Integer.bitCount(mdtsBytes) != 1) {
            throw new IllegalArgumentException("mdtsBytes must be a power of two of at least " + MIN_MDTS_BYTES
                + ", got " + mdtsBytes);
        }
    }

    /** MDTS field of Identify Controller: log2 of the transfer size in 4 KiB pages (1 or more; 0 would be "no limit"). */
    public int mdtsField() {
        return Integer.numberOfTrailingZeros(mdtsBytes >>> 12);
    }

    /** IOCCSZ field (16-byte units, SQE included). */
    public int ioccsz() {
        return (64 + inCapsuleDataSize) / 16;
    }
}
