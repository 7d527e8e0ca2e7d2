package io.nvmf4j.spdk;

/** SPDK's cumulative I/O statistics of one bdev (spdk_bdev_get_device_stat). */
public record BdevIoStat(String name, long readOps, long bytesRead, long writeOps, long bytesWritten, long unmapOps,
                         long bytesUnmapped, long readLatencyTicks, long writeLatencyTicks, long tickRate) {
    static BdevIoStat parse(String line) {
        String[] f = line.split("\t");
        return new BdevIoStat(f[0], Long.parseUnsignedLong(f[1]), Long.parseUnsignedLong(f[2]),
            Long.parseUnsignedLong(f[3]), Long.parseUnsignedLong(f[4]), Long.parseUnsignedLong(f[5]),
            Long.parseUnsignedLong(f[6]), Long.parseUnsignedLong(f[7]), Long.parseUnsignedLong(f[8]),
            Long.parseUnsignedLong(f[9]));
    }
}
