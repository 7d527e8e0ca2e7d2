package io.nvmf4j.engine;

import java.util.Map;

/**
 * The data-path statistics of an engine that counts its own I/O, read at each scrape in place of the
 * {@link IoObserver}'s events (which such an engine does not send): see {@link Engine#ownIoStats()}.
 */
public interface EngineIoStats {
    /** The poll groups' queue and I/O counts, summed over the poll groups. */
    PollGroupStat pollGroupStat();

    /** Cumulative I/O statistics per bdev, by bdev name and by each alias. */
    Map<String, BdevIoStat> bdevIoStats();

    /** The latency histogram of {@code bdev}, or of every bdev when it is null, by name. */
    Map<String, BdevLatency> bdevLatency(String bdev);
}
