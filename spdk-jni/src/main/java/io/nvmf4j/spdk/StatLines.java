package io.nvmf4j.spdk;

import io.nvmf4j.engine.BdevIoStat;
import io.nvmf4j.engine.BdevLatency;
import io.nvmf4j.engine.PollGroupStat;

/** The statistics lines of {@code nvmf4j_spdk.c} ({@link SpdkNative}'s stats calls), tab-separated fields. */
final class StatLines {
    private StatLines() {
    }

    static PollGroupStat pollGroupStat(String line) {
        String[] f = line.split("\t");
        return new PollGroupStat(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]),
            Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]));
    }

    static BdevIoStat bdevIoStat(String line) {
        String[] f = line.split("\t");
        return new BdevIoStat(f[0], Long.parseUnsignedLong(f[1]), Long.parseUnsignedLong(f[2]),
            Long.parseUnsignedLong(f[3]), Long.parseUnsignedLong(f[4]), Long.parseUnsignedLong(f[5]),
            Long.parseUnsignedLong(f[6]), Long.parseUnsignedLong(f[7]), Long.parseUnsignedLong(f[8]),
            Long.parseUnsignedLong(f[9]));
    }

    /** A line of {@code SpdkNative.bdevLatency}: name, then tab-separated {@code start,end,count} buckets. */
    static BdevLatency bdevLatency(String line) {
        String[] f = line.split("\t");
        int n = f.length - 1;
        long[] start = new long[n];
        long[] end = new long[n];
        long[] count = new long[n];
        for (int i = 0; i < n; i++) {
            String[] b = f[i + 1].split(",");
            start[i] = Long.parseUnsignedLong(b[0]);
            end[i] = Long.parseUnsignedLong(b[1]);
            count[i] = Long.parseUnsignedLong(b[2]);
        }
        return new BdevLatency(f[0], start, end, count);
    }
}
