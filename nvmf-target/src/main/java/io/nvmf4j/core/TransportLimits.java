package io.nvmf4j.core;

/**
 * Limits a transport advertises to hosts.
 *
 * @param trtype           transport type in the discovery log (3 = TCP, 1 = RDMA)
 * @param inCapsuleDataSize in-capsule data bytes on I/O queues (IOCCSZ = 4 + this / 16)
 * @param mdtsBytes        maximum data transfer size in bytes (a power of two, at least 4 KiB)
 * @param maxQueueDepth    largest queue size in entries (CAP.MQES + 1)
 * @param maxIoQueues      I/O queues per controller
 * @param msdbd            SGL descriptors per command (1 for TCP)
 */
public record TransportLimits(int trtype, int inCapsuleDataSize, int mdtsBytes, int maxQueueDepth, int maxIoQueues,
                              int msdbd) {
    public static final int TRTYPE_RDMA = 1;
    public static final int TRTYPE_TCP = 3;

    /** MDTS field of Identify Controller: log2 of the transfer size in 4 KiB pages. */
    public int mdtsField() {
        return Integer.numberOfTrailingZeros(mdtsBytes >>> 12);
    }

    /** IOCCSZ field (16-byte units, SQE included). */
    public int ioccsz() {
        return (64 + inCapsuleDataSize) / 16;
    }
}
