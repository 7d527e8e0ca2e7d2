package io.nvmf4j.engine;

/** SPDK's cumulative I/O statistics of one bdev (spdk_bdev_get_device_stat). */
public record BdevIoStat(String name, long readOps, long bytesRead, long writeOps, long bytesWritten, long unmapOps,
                         long bytesUnmapped, long readLatencyTicks, long writeLatencyTicks, long tickRate) {
}
