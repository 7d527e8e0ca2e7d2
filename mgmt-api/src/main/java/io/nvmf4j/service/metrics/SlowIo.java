package io.nvmf4j.service.metrics;

/**
 * One of the slowest recent I/O commands ({@link Metrics#slowest}).
 *
 * @param timeMillis   when it completed (epoch milliseconds)
 * @param subsystem    the subsystem NQN
 * @param nsid         the namespace it named (as sent; it may not exist)
 * @param host         the host NQN of its controller
 * @param cntlid       its controller
 * @param qid          its I/O queue
 * @param opcode       NVM opcode (0x02 read, 0x01 write, ...)
 * @param lba          its starting LBA, or null for a command without a block range (flush, ...)
 * @param blocks       its block count, or null as for lba
 * @param bytes        data bytes it moved (0 when it failed or moves none)
 * @param latencyNanos capsule arrival to response sent
 * @param status       NVMe status (0 = success; SCT &lt;&lt; 8 | SC)
 */
public record SlowIo(long timeMillis, String subsystem, int nsid, String host, int cntlid, int qid, int opcode,
                     Long lba, Integer blocks, int bytes, long latencyNanos, int status) {
    /** The status as the error meters tag it: {@code <sct>/0x<sc>}. */
    public String statusText() {
        return StatusCounters.statusTag(status);
    }
}
