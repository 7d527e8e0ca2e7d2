package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Options of the NVMe/RDMA transport (one set for every RDMA listener). */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class RdmaTransportConfig {
    /** In-capsule data size in bytes for I/O queues (capsule = 64 + this); IOCCSZ is derived from it. */
    public int inCapsuleDataSize = 4096;
    /** Largest queue size (entries) a host may ask for; the device and the host's sizes may lower it. */
    public int maxQueueDepth = 128;
    /** Largest number of I/O queues per controller. */
    public int maxIoQueues = 8;
    /** Maximum data transfer size in bytes (one data buffer); a power of two from 4 KiB to 1 MiB. */
    public int mdtsBytes = 131072;
    /** Receive buffers (capsules) posted on each poll group's shared receive queue. */
    public int srqDepth = 256;
    /** Data buffers ({@code mdtsBytes} each) per poll group; requests wait for one when all are in use. */
    public int dataBuffers = 128;
    /** Completion queue entries per poll group; bounds the summed queue depth of its queue pairs. */
    public int cqSize = 4096;
    /** Largest number of RDMA READs a queue pair keeps outstanding (further bounded by device and host). */
    public int maxReadDepth = 16;
    /** Back the registered buffers with hugepages when the system has them (falls back, logged). */
    public boolean hugepages = true;
}
