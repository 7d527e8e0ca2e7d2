package io.nvmf4j.engine;

/** SPDK's NVMe-oF poll-group statistics, summed over the poll groups (one per reactor). */
public record PollGroupStat(long pollGroups, long adminQueuesTotal, long ioQueuesTotal, long adminQueues,
                            long ioQueues, long pendingBdevIo, long completedIo) {
}
