package io.nvmf4j.spdk;

/** SPDK's NVMe-oF poll-group statistics, summed over the poll groups (one per reactor). */
public record PollGroupStat(long pollGroups, long adminQueuesTotal, long ioQueuesTotal, long adminQueues,
                            long ioQueues, long pendingBdevIo, long completedIo) {
    static PollGroupStat parse(String line) {
        String[] f = line.split("\t");
        return new PollGroupStat(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]),
            Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]));
    }
}
