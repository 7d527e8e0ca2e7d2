package io.nvmf4j.engine;

/** Process-wide counts of an engine's rbd bdevs' recoveries from Ceph faults (see {@link Engine#rbdCounters()}). */
public interface RbdCounters {
    /** Times an rbd bdev found its Ceph client blocklisted (fenced until it reconnected). */
    long blocklisted();

    /** Rbd bdevs serving again as a new Ceph client after a blocklist. */
    long reconnected();

    /** Failed attempts of an rbd bdev to watch its image's header again after the watch broke. */
    long rewatchFailures();
}
