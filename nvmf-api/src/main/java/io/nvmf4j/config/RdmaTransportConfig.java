package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Options of the NVMe/RDMA transport (one set for every RDMA listener). */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class RdmaTransportConfig {
    /** In-capsule data size in bytes for I/O queues (capsule = 64 + this); IOCCSZ is derived from it. */
    @Range(min = 0, max = 131072, multipleOf = 16)
    public int inCapsuleDataSize = 4096;
    /** Largest queue size (entries) a host may ask for; the device and the host's sizes may lower it. */
    @Range(min = 16, max = 1024)
    public int maxQueueDepth = 128;
    /** Largest number of I/O queues per controller. */
    @Range(min = 1, max = 128)
    public int maxIoQueues = 8;
    /** Maximum data transfer size in bytes (one data buffer); a power of two from 8 KiB to 1 MiB. */
    @Range(min = TcpTransportConfig.MIN_MDTS_BYTES, max = 1 << 20)
    public int mdtsBytes = 131072;
    /** Receive buffers (capsules) posted on each poll group's shared receive queue. */
    @Range(min = 16, max = 16384)
    public int srqDepth = 256;
    /** Data buffers ({@code mdtsBytes} each) per poll group; requests wait for one when all are in use. */
    @Range(min = 4, max = 16384)
    public int dataBuffers = 128;
    /** Completion queue entries per poll group; bounds the summed queue depth of its queue pairs. */
    @Range(min = 256, max = 1 << 20)
    public int cqSize = 4096;
    /** Largest number of RDMA READs a queue pair keeps outstanding (further bounded by device and host). */
    @Range(min = 1, max = 255)
    public int maxReadDepth = 16;
    /**
     * Capsules one queue pair may keep waiting in shared receive buffers while every request slot of it
     * is taken (a host may send a command as soon as it has a response, before the response SEND's
     * completion is polled here). One more closes the queue pair: a host past this bound is sending past
     * its queue size or not acknowledging responses, and must not hold the poll group's shared receive
     * buffers (bounded further by the queue depth).
     */
    @Range(min = 1, max = 1024)
    public int maxParkedCapsules = 16;
    /**
     * How often the target retries a SEND or RDMA WRITE that the host answered with receiver-not-ready
     * (accept's rnr_retry_count, 0..7; 7 means retry for ever). Finite, so a host that stops posting
     * receives fails its queue pair (which is then torn down, releasing its buffers) instead of holding
     * its buffers for good; a host that follows the protocol always has a receive posted per command.
     */
    @Range(min = 0, max = 7, note = "7: retry for ever")
    public int rnrRetryCount = 6;
    /**
     * Connections (queue pairs, one per admin or I/O queue) an RDMA listener holds at once; one more is refused
     * with a CM reject (NVMe/RDMA status 6, no resources) and a WARN line naming the limit. 1..1048576.
     */
    @Range(min = 1, max = 1 << 20)
    public int maxConnectionsPerListener = 4096;
    /** Connections one host address may hold on an RDMA listener at once; beyond it likewise. 1..1048576. */
    @Range(min = 1, max = 1 << 20)
    public int maxConnectionsPerHost = 1024;
    /** Back the registered buffers with hugepages when the system has them (falls back, logged). */
    public boolean hugepages = true;
}
